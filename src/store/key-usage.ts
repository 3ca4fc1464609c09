// Each API key's audio requests per UTC day: requests, seconds of audio
// transcribed, errors. One upsert per request, off the answer's path (atomic,
// so replicas sharing a database count together); today's audio seconds are
// also kept in memory (read once per key and day), so the daily budget is
// checked without a query per request, except with a shared database, where
// other replicas add to it.
import { StoreUnavailableError, type Database } from './db';
import type { KeyUsage } from '../admin-api';

interface Row {
  key_id: string;
  day: string;
  requests: number;
  audio_seconds: number;
  errors: number;
}

/** The UTC day a moment falls on, as the table keys it. */
export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

export class KeyUsageStore {
  /** `${keyId} ${day}` → audio seconds counted today (the database's, plus this process's since). */
  private readonly todaySeconds = new Map<string, number>();
  /** First reads in flight: every caller waits for the same one. */
  private readonly reading = new Map<string, Promise<number>>();

  constructor(private readonly db: Database, private readonly onError: (err: Error) => void = () => {}) {}

  /** Audio seconds the key has used on `day`: with a shared database, what every replica has counted, read each time. */
  async audioSeconds(keyId: string, day: string): Promise<number> {
    const slot = `${keyId} ${day}`;
    if (this.db.shared) {
      try {
        const row = await this.db.get<Row>('SELECT audio_seconds FROM key_usage WHERE key_id = ? AND day = ?', [keyId, day]);
        this.todaySeconds.set(slot, row?.audio_seconds ?? 0);
        return row?.audio_seconds ?? 0;
      } catch (err) {
        // Unreachable: the last count read plus what this replica has served since, rather than refuse the key.
        if (err instanceof StoreUnavailableError) return this.todaySeconds.get(slot) ?? 0;
        throw err;
      }
    }
    const pending = this.reading.get(slot);
    if (pending) return pending;
    const known = this.todaySeconds.get(slot);
    if (known !== undefined) return known;
    if (this.todaySeconds.size > 10_000) this.todaySeconds.clear(); // past days; re-read when asked
    // Counted from zero while the row is read: a request finishing meanwhile adds to the count.
    this.todaySeconds.set(slot, 0);
    const read = this.db.get<Row>('SELECT audio_seconds FROM key_usage WHERE key_id = ? AND day = ?', [keyId, day]).then((row) => {
      const seconds = (this.todaySeconds.get(slot) ?? 0) + (row?.audio_seconds ?? 0);
      this.todaySeconds.set(slot, seconds);
      return seconds;
    }).finally(() => this.reading.delete(slot));
    this.reading.set(slot, read);
    return read;
  }

  /** Counts one finished request. Never throws: a failed write is reported and the answer goes out regardless. */
  record(keyId: string, day: string, use: { audioSeconds: number; error: boolean }): void {
    const slot = `${keyId} ${day}`;
    const known = this.todaySeconds.get(slot);
    if (known !== undefined) this.todaySeconds.set(slot, known + use.audioSeconds);
    this.db.run(
      `INSERT INTO key_usage (key_id, day, requests, audio_seconds, errors) VALUES (?, ?, 1, ?, ?)
       ON CONFLICT (key_id, day) DO UPDATE SET requests = key_usage.requests + 1,
       audio_seconds = key_usage.audio_seconds + excluded.audio_seconds, errors = key_usage.errors + excluded.errors`,
      [keyId, day, use.audioSeconds, use.error ? 1 : 0],
    ).catch(this.onError);
  }

  /** Every key's usage on `day`, by key id. */
  async onDay(day: string): Promise<Map<string, KeyUsage>> {
    const rows = await this.db.all<Row>('SELECT * FROM key_usage WHERE day = ?', [day]);
    return new Map(rows.map((r) => [r.key_id, { day, requests: r.requests, audioSeconds: Math.round(r.audio_seconds * 100) / 100, errors: r.errors }]));
  }
}
