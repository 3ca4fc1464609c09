// A replica sharing the database writes its row every HEARTBEAT_MS (what it
// runs, how busy it is), so /admin/status on any replica lists them all; a
// clean shutdown removes the row. A failed write is logged once per outage.
import os from 'node:os';
import type { Services } from '../services';
import { HEARTBEAT_MS } from '../store/replicas';
import { StoreUnavailableError } from '../store/db';

/** host:port as other machines would name this replica. */
export const replicaAddress = (host: string, port: number): string =>
  `${host === '0.0.0.0' || host === '::' ? os.hostname() : host}:${port}`;

/** Starts beating; the returned function stops and leaves the list. */
/** The parts of the running server a heartbeat reads. */
export type HeartbeatParts = Pick<Services, 'local' | 'logger' | 'replica' | 'startedAt' | 'stt' | 'version'>;

export function startHeartbeat(s: HeartbeatParts, address: string): () => Promise<void> {
  const log = s.logger.child({ component: 'replicas' });
  const startedAt = new Date(s.startedAt).toISOString();
  let failing = false;
  const beat = () => {
    const local = s.local.status();
    const queue = s.local.scheduler.stats();
    s.stt.current()
      // The runtime it serves, or else the one the routing names (a replica whose load failed shows which).
      .then((routing) => s.replica.store.beat({
        id: s.replica.id, address, version: s.version, startedAt, runtime: local.activeModel ?? routing.localModel, state: local.state, queueDepth: queue.running + queue.waiting,
      }))
      .then(() => {
        if (failing) log.info('heartbeat written again');
        failing = false;
      }, (err: Error) => {
        if (!failing) log.warn({ err: err instanceof StoreUnavailableError ? err.detail : err.message }, 'could not write the heartbeat');
        failing = true;
      });
  };
  beat();
  const timer = setInterval(beat, HEARTBEAT_MS).unref();
  return async () => {
    clearInterval(timer);
    await s.replica.store.leave(s.replica.id).catch(() => {});
  };
}
