// External API keys: high-entropy secrets with a visible prefix. Only a
// SHA-256 of the key is stored (the key has 256 bits of entropy, so a slow
// hash adds nothing); lookup is by prefix, comparison in constant time.
//
// With a shared database (PostgreSQL, several replicas) a key once verified
// is kept in memory (SharedRowCache), so a request does not query the
// database; any key change empties it. If the database cannot be reached,
// known keys keep working for the outage grace (STT_STORE_GRACE_S): nobody can revoke a key
// meanwhile (revoking writes to the same database). SQLite is one process's
// file: looked up on every request, as cheap as the cache.
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Database } from './db';
import { SharedRowCache } from './shared-cache';
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
  /** Shared database only: rows of keys verified, by prefix (shared-cache.ts). */
  private readonly known: SharedRowCache<Row>;

  constructor(private readonly db: Database, private readonly onError: (err: Error) => void = () => {}) {
    this.known = new SharedRowCache<Row>(db, 'api_keys');
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
      this.known.forget();
    }
    return this.get(id);
  }

  /** Idempotent: a second revoke keeps the first revokedAt. */
  async revoke(id: string): Promise<ApiKeyRecord | undefined> {
    await this.db.run('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?', [new Date().toISOString(), id]);
    this.known.forget();
    return this.get(id);
  }

  /** The record for a presented key, or null for unknown, malformed or revoked keys. */
  async verify(presented: string): Promise<ApiKeyRecord | null> {
    if (!presented.startsWith(KEY_PREFIX) || presented.length < PREFIX_LENGTH + 8 || presented.length > 200) return null;
    const prefix = presented.slice(0, PREFIX_LENGTH);
    const row = await this.known.read(prefix, () => this.db.get<Row>('SELECT * FROM api_keys WHERE prefix = ?', [prefix]));
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
