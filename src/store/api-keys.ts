// External API keys: high-entropy secrets with a visible prefix. Only a
// SHA-256 of the key is stored (the key has 256 bits of entropy, so a slow
// hash adds nothing); lookup is by prefix, comparison in constant time.
//
// With a shared database (PostgreSQL, several replicas) a key once verified
// is kept in memory, so a request does not query the database: the cache is
// emptied whenever any replica changes a key (a change notification), and
// re-read once a second while notifications are not arriving. If the database
// cannot be reached then, known keys keep working for OUTAGE_GRACE_MS from
// the last moment the cache was known to be current; nobody can revoke a key
// meanwhile (revoking writes to the same database). SQLite is one process's
// file: looked up on every request, as cheap as the cache.
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Database } from './db';
import type { ApiKeyView, KeyLimits } from '../admin-api';

/** As the admin API shows it (never the key itself). */
export type ApiKeyRecord = ApiKeyView;

interface Row {
  id: string;
  name: string;
  prefix: string;
  hash: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  requests_per_minute: number | null;
  audio_seconds_per_day: number | null;
  local_only: number;
}

export const KEY_PREFIX = 'sk-stt-';
const PREFIX_LENGTH = KEY_PREFIX.length + 8;
/** lastUsedAt is written at most this often per key, off the request path. */
const LAST_USED_RESOLUTION_MS = 10_000;
/** How long known keys keep working while a shared database is unreachable. */
export const OUTAGE_GRACE_MS = 5 * 60_000;

const sha256 = (s: string) => createHash('sha256').update(s).digest();
const toRecord = (r: Row): ApiKeyRecord => ({
  id: r.id,
  name: r.name,
  prefix: r.prefix,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
  requestsPerMinute: r.requests_per_minute,
  audioSecondsPerDay: r.audio_seconds_per_day,
  localOnly: r.local_only === 1,
});

export class ApiKeyStore {
  private readonly lastWritten = new Map<string, number>();
  /** Shared database only: rows of keys verified since the last change, by prefix. */
  private readonly known = new Map<string, Row>();
  /** When the cache was last re-read in full while notifications were lost. */
  private confirmedAt = 0;
  /** Counts every emptying of the cache: a row read before one is not cached after it (it may predate a revoke). */
  private generation = 0;

  constructor(private readonly db: Database, private readonly onError: (err: Error) => void = () => {}) {
    db.onChange((topic) => {
      if (topic === 'api_keys') this.forget();
      else if (topic === 'resync') this.reread().catch(() => {}); // unreachable: the cache serves out its grace
    });
  }

  /** After this process changed a key: its own cache forgets at once, the other replicas when the notification reaches them. */
  private forget(): void {
    this.known.clear();
    this.generation++;
  }

  private async changed(): Promise<void> {
    this.forget();
    await this.db.notify('api_keys');
  }

  /** Replaces every cached row with the database's (revoked or deleted keys leave). */
  private async reread(): Promise<void> {
    if (this.known.size === 0) return;
    const generation = this.generation;
    const rows = await this.db.all<Row>('SELECT * FROM api_keys');
    if (generation !== this.generation) return;
    const byPrefix = new Map(rows.map((r) => [r.prefix, r]));
    for (const prefix of this.known.keys()) {
      const row = byPrefix.get(prefix);
      if (row) this.known.set(prefix, row);
      else this.known.delete(prefix);
    }
    this.confirmedAt = Date.now();
  }

  /** A cached row may answer: notifications flow, or were lost less than the grace ago (or the cache re-read since). */
  private cacheCurrent(): boolean {
    const lost = this.db.notificationsLostAt;
    return lost === null || Date.now() - Math.max(lost, this.confirmedAt) < OUTAGE_GRACE_MS;
  }

  private async byPrefix(prefix: string): Promise<Row | undefined> {
    if (!this.db.shared) return this.db.get<Row>('SELECT * FROM api_keys WHERE prefix = ?', [prefix]);
    const cached = this.known.get(prefix);
    if (cached && this.cacheCurrent()) return cached;
    const generation = this.generation;
    const row = await this.db.get<Row>('SELECT * FROM api_keys WHERE prefix = ?', [prefix]);
    if (row && generation === this.generation) this.known.set(prefix, row);
    return row;
  }

  async create(name: string, limits: Partial<KeyLimits> = {}): Promise<ApiKeyRecord & { key: string }> {
    const key = KEY_PREFIX + randomBytes(32).toString('base64url');
    const row: Row = {
      id: randomUUID(),
      name,
      prefix: key.slice(0, PREFIX_LENGTH),
      hash: sha256(key).toString('hex'),
      created_at: new Date().toISOString(),
      last_used_at: null,
      revoked_at: null,
      requests_per_minute: limits.requestsPerMinute ?? null,
      audio_seconds_per_day: limits.audioSecondsPerDay ?? null,
      local_only: limits.localOnly ? 1 : 0,
    };
    await this.db.run(
      'INSERT INTO api_keys (id, name, prefix, hash, created_at, requests_per_minute, audio_seconds_per_day, local_only) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      [row.id, row.name, row.prefix, row.hash, row.created_at, row.requests_per_minute, row.audio_seconds_per_day, row.local_only],
    );
    await this.changed();
    return { ...toRecord(row), key };
  }

  async list(): Promise<ApiKeyRecord[]> {
    const rows = await this.db.all<Row>('SELECT * FROM api_keys ORDER BY created_at, rowid');
    return rows.map(toRecord);
  }

  async get(id: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db.get<Row>('SELECT * FROM api_keys WHERE id = ?', [id]);
    return row && toRecord(row);
  }

  /** Changes the fields given (undefined: kept; null: no limit). Undefined when the key does not exist. */
  async setLimits(id: string, limits: Partial<KeyLimits>): Promise<ApiKeyRecord | undefined> {
    const sets: string[] = [];
    const params: unknown[] = [];
    if (limits.requestsPerMinute !== undefined) sets.push('requests_per_minute = ?'), params.push(limits.requestsPerMinute);
    if (limits.audioSecondsPerDay !== undefined) sets.push('audio_seconds_per_day = ?'), params.push(limits.audioSecondsPerDay);
    if (limits.localOnly !== undefined) sets.push('local_only = ?'), params.push(limits.localOnly ? 1 : 0);
    if (sets.length) {
      await this.db.run(`UPDATE api_keys SET ${sets.join(', ')} WHERE id = ?`, [...params, id]);
      await this.changed();
    }
    return this.get(id);
  }

  /** Idempotent: a second revoke keeps the first revokedAt. */
  async revoke(id: string): Promise<ApiKeyRecord | undefined> {
    await this.db.run('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?', [new Date().toISOString(), id]);
    await this.changed();
    return this.get(id);
  }

  /** The record for a presented key, or null for unknown, malformed or revoked keys. */
  async verify(presented: string): Promise<ApiKeyRecord | null> {
    if (!presented.startsWith(KEY_PREFIX) || presented.length < PREFIX_LENGTH + 8 || presented.length > 200) return null;
    const row = await this.byPrefix(presented.slice(0, PREFIX_LENGTH));
    if (!row || row.revoked_at) return null;
    if (!timingSafeEqual(sha256(presented), Buffer.from(row.hash, 'hex'))) return null;
    this.touch(row.id);
    return toRecord(row);
  }

  private touch(id: string): void {
    const now = Date.now();
    if (now - (this.lastWritten.get(id) ?? 0) < LAST_USED_RESOLUTION_MS) return;
    this.lastWritten.set(id, now);
    this.db.run('UPDATE api_keys SET last_used_at = ? WHERE id = ?', [new Date(now).toISOString(), id]).catch(this.onError);
  }
}
