// Requests per key per minute, in fixed windows: counted in memory when one
// process serves (SQLite), and in the shared database when several replicas
// do, so a key's limit holds across all of them. There the window is the
// clock minute (every replica agrees on it) and the count is one atomic
// upsert that admits only under the limit; while the database cannot be
// reached each replica counts on its own rather than refuse known keys.
import { StoreUnavailableError, type Database } from './db';

const WINDOW_MS = 60_000;

export interface WindowCount {
  admitted: boolean;
  /** Requests counted in the window, this one included when admitted. */
  count: number;
  /** Until the window ends. */
  resetMs: number;
}

export interface RequestWindows {
  /** Counts one request of the key if the window has room under `limit`. */
  count(keyId: string, limit: number, now: number): Promise<WindowCount>;
}

/** One process's own windows, each starting at its key's first request. */
export class MemoryRequestWindows implements RequestWindows {
  private readonly windows = new Map<string, { start: number; count: number }>();

  async count(keyId: string, limit: number, now: number): Promise<WindowCount> {
    let w = this.windows.get(keyId);
    if (!w || now - w.start >= WINDOW_MS) {
      if (this.windows.size > 10_000) this.windows.clear();
      w = { start: now, count: 0 };
      this.windows.set(keyId, w);
    }
    const admitted = w.count < limit;
    if (admitted) w.count++;
    return { admitted, count: w.count, resetMs: w.start + WINDOW_MS - now };
  }
}

/** Windows in the shared database's request_windows table, one row per key and minute. */
export class SharedRequestWindows implements RequestWindows {
  private readonly fallback = new MemoryRequestWindows();
  private lastSweep = 0;

  constructor(private readonly db: Database) {}

  async count(keyId: string, limit: number, now: number): Promise<WindowCount> {
    const start = now - (now % WINDOW_MS);
    try {
      const row = await this.db.get<{ requests: number }>(
        `INSERT INTO request_windows (key_id, window_start, requests) VALUES (?, ?, 1)
         ON CONFLICT (key_id, window_start) DO UPDATE SET requests = request_windows.requests + 1 WHERE request_windows.requests < ?
         RETURNING requests`,
        [keyId, start, limit],
      );
      this.sweep(now);
      return { admitted: row !== undefined && row.requests <= limit, count: row?.requests ?? limit, resetMs: start + WINDOW_MS - now };
    } catch (err) {
      if (err instanceof StoreUnavailableError) return this.fallback.count(keyId, limit, now);
      throw err;
    }
  }

  /** Past windows are deleted once a minute by whichever replica counts. */
  private sweep(now: number): void {
    if (now - this.lastSweep < WINDOW_MS) return;
    this.lastSweep = now;
    this.db.run('DELETE FROM request_windows WHERE window_start < ?', [now - 2 * WINDOW_MS]).catch(() => {});
  }
}

export const requestWindows = (db: Database): RequestWindows => (db.shared ? new SharedRequestWindows(db) : new MemoryRequestWindows());
