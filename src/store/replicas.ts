// One row per running replica in a shared database: who it is, what it runs
// and how busy it is, written every HEARTBEAT_MS. /admin/status lists the rows
// heard from within LIVE_MS; rows silent for a day are deleted (each replica
// sweeps once an hour).
import type { Database } from './db';
import type { ReplicaView } from '../admin-api';

export const HEARTBEAT_MS = 2000;
/** A replica missing this many heartbeats is no longer listed. */
const LIVE_MS = 5 * HEARTBEAT_MS;

interface Row {
  id: string;
  address: string | null;
  version: string;
  started_at: string;
  runtime: string | null;
  state: string;
  queue_depth: number;
  heartbeat_at: Date;
}

export type ReplicaBeat = Omit<ReplicaView, 'lastHeartbeatAt' | 'self'>;

export class ReplicaStore {
  private lastSweep = 0;

  constructor(private readonly db: Database) {}

  async beat(r: ReplicaBeat): Promise<void> {
    await this.db.run(
      `INSERT INTO replicas (id, address, version, started_at, runtime, state, queue_depth, heartbeat_at) VALUES (?, ?, ?, ?, ?, ?, ?, now())
       ON CONFLICT (id) DO UPDATE SET address = excluded.address, runtime = excluded.runtime, state = excluded.state,
       queue_depth = excluded.queue_depth, heartbeat_at = excluded.heartbeat_at`,
      [r.id, r.address, r.version, r.startedAt, r.runtime, r.state, r.queueDepth],
    );
    // Rows silent for a day go, swept once an hour by each replica rather than on every beat.
    if (Date.now() - this.lastSweep < 3_600_000) return;
    this.lastSweep = Date.now();
    await this.db.run("DELETE FROM replicas WHERE heartbeat_at < now() - interval '1 day'");
  }

  /** The replica leaves the list at once on a clean shutdown. */
  async leave(id: string): Promise<void> {
    await this.db.run('DELETE FROM replicas WHERE id = ?', [id]);
  }

  async live(selfId: string): Promise<ReplicaView[]> {
    const rows = await this.db.all<Row>(
      `SELECT * FROM replicas WHERE heartbeat_at > now() - make_interval(secs => ?) ORDER BY started_at, id`, [LIVE_MS / 1000]);
    return rows.map((r) => ({
      id: r.id, self: r.id === selfId, address: r.address, version: r.version, startedAt: r.started_at,
      runtime: r.runtime, state: r.state as ReplicaView['state'], queueDepth: r.queue_depth, lastHeartbeatAt: r.heartbeat_at.toISOString(),
    }));
  }
}
