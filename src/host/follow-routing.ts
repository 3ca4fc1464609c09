// Makes a running server follow the stored routing: the backends drop their
// cached copy, and the local engine loads (in the background) or lets go of
// its runtime. /health answers meanwhile; transcriptions get 503
// model_loading until the load is done. Changes arrive three ways, all here:
// from this process (the admin API, a first start), from another process on
// the same SQLite file (the admin CLI: polled), and from other replicas on
// PostgreSQL (notifications).
import type { Database } from '../store/db';
import type { Routing, SettingsStore } from '../store/settings';
import type { LocalEngine } from '../stt/local/engine';
import type { Backends } from '../stt/backends';

export function followRouting(
  server: { local: LocalEngine; stt: Backends },
  routing: Routing,
  { retryFailed }: { retryFailed: boolean },
): void {
  server.stt.invalidate(routing);
  const { local } = server;
  const status = local.status();
  if (!routing.localModel) {
    if (status.state !== 'none') local.deactivate();
    return;
  }
  // A failed load is tried again only when the host asks; the routing poll
  // never retries one by itself (it would reload a broken file every poll).
  const load = status.state === 'error' ? retryFailed : status.activeModel !== routing.localModel;
  if (load) local.activate(routing.localModel).catch(() => {}); // the engine logs and reports the failure
}

/** How often a server on SQLite re-reads the routing the admin CLI may have changed in the file. */
const ROUTING_POLL_MS = 2000;

/**
 * Follows the stored routing from now on: read once at once, then on every
 * change another process makes. Never retries a failed load by itself.
 */
export async function followStoredRouting(p: { db: Database; settings: SettingsStore; local: LocalEngine; stt: Backends }): Promise<{ stop(): void }> {
  let stopped = false;
  const sync = async () => {
    const routing = await p.settings.routing();
    // A read that was in flight when the server stopped must not load a model into a closing engine.
    if (stopped) return;
    p.local.noticeMarkerCleared();
    followRouting(p, routing, { retryFailed: false });
  };
  await sync();
  if (p.db.shared) {
    // Another replica (or the admin CLI) changed routing: follow at once; re-read whenever notifications may have been missed.
    p.db.onChange((topic) => {
      if (topic === 'routing' || topic === 'resync') sync().catch(() => {});
    });
    return { stop: () => void (stopped = true) };
  }
  // The admin CLI may change routing in the SQLite file while the server runs.
  const poll = setInterval(() => sync().catch(() => {}), ROUTING_POLL_MS).unref();
  return {
    stop: () => {
      stopped = true;
      clearInterval(poll);
    },
  };
}
