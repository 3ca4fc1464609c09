// PostgreSQL through node-postgres (a pool of connections), for several
// replicas sharing one database: migrations applied at start under an
// advisory lock (replicas starting together: one migrates, the others wait),
// and change notifications through LISTEN/NOTIFY on one dedicated
// connection, re-established when it drops.
import pg from 'pg';
import { StoreUnavailableError, type ChangeTopic, type Database } from './db';

/** Forward-only, one transaction each; schema_version holds how many ran. */
const MIGRATIONS: string[] = [
  // The SQLite schema (sqlite-db.ts, both of its migrations), plus replicas.
  // `rowid` stands in for SQLite's implicit one: keys are listed in insertion order.
  `CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   CREATE TABLE api_keys (
     rowid BIGSERIAL, id TEXT PRIMARY KEY, name TEXT NOT NULL, prefix TEXT NOT NULL UNIQUE, hash TEXT NOT NULL,
     created_at TEXT NOT NULL, last_used_at TEXT, revoked_at TEXT,
     requests_per_minute INTEGER, audio_seconds_per_day INTEGER, local_only INTEGER NOT NULL DEFAULT 0);
   CREATE TABLE providers (
     id TEXT PRIMARY KEY, name TEXT NOT NULL, kind TEXT NOT NULL, base_url TEXT NOT NULL,
     enabled INTEGER NOT NULL DEFAULT 0, api_key_enc TEXT, api_key_hint TEXT,
     models TEXT NOT NULL DEFAULT '[]', created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
   CREATE TABLE key_usage (
     key_id TEXT NOT NULL, day TEXT NOT NULL, requests INTEGER NOT NULL DEFAULT 0,
     audio_seconds DOUBLE PRECISION NOT NULL DEFAULT 0, errors INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (key_id, day));
   CREATE TABLE replicas (
     id TEXT PRIMARY KEY, address TEXT, version TEXT NOT NULL, started_at TEXT NOT NULL,
     runtime TEXT, state TEXT NOT NULL, queue_depth INTEGER NOT NULL, heartbeat_at TIMESTAMPTZ NOT NULL);`,
  // Requests per key and clock minute, counted by every replica (request-windows.ts).
  `CREATE TABLE request_windows (
     key_id TEXT NOT NULL, window_start BIGINT NOT NULL, requests INTEGER NOT NULL, PRIMARY KEY (key_id, window_start));`,
];

/** pg_advisory_lock's key for migrations: any constant that no other application on the database uses. */
const MIGRATION_LOCK = 0x5717_0001;
const CHANNEL = 'stt_changes';
const RESYNC_MS = 1000;

/** `?` placeholders (the SQL both backends share) as PostgreSQL's `$1, $2, ...`; the stores put no `?` inside literals. */
const numbered = (sql: string): string => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

/** Errors that mean the server is unreachable or going away, not that the query is wrong. */
function unreachable(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  if (typeof e.code === 'string' && /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EHOSTUNREACH|57P0[1-3]|08\d\d\d)$/.test(e.code)) return true;
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(e.message ?? '');
}

export class PostgresDatabase implements Database {
  readonly shared = true;
  private readonly listeners: ((topic: ChangeTopic | 'resync') => void)[] = [];
  private listenClient: pg.Client | null = null;
  private resyncTimer: NodeJS.Timeout | null = null;
  notificationsLostAt: number | null = null;
  private connecting = false;
  private closed = false;

  private constructor(private readonly url: string, private readonly pool: pg.Pool) {}

  static async open(url: string): Promise<PostgresDatabase> {
    const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 3000, idleTimeoutMillis: 30_000 });
    // An idle connection the server dropped: the pool replaces it; without a handler the process would exit.
    pool.on('error', () => {});
    const db = new PostgresDatabase(url, pool);
    try {
      await db.migrate();
    } catch (err) {
      await pool.end();
      throw err;
    }
    await db.listen();
    return db;
  }

  private async migrate(): Promise<void> {
    const client = await this.pool.connect();
    try {
      // Held for the session: a second replica starting now waits here, then finds nothing left to do.
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      await client.query('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
      const row = (await client.query<{ version: number }>('SELECT version FROM schema_version')).rows[0];
      if (!row) await client.query('INSERT INTO schema_version (version) VALUES (0)');
      for (let v = row?.version ?? 0; v < MIGRATIONS.length; v++) {
        await client.query('BEGIN');
        try {
          await client.query(MIGRATIONS[v]);
          await client.query('UPDATE schema_version SET version = $1', [v + 1]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw err;
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
      client.release();
    }
  }

  private async query<T extends pg.QueryResultRow>(sql: string, params: unknown[]): Promise<pg.QueryResult<T>> {
    try {
      return await this.pool.query<T>(numbered(sql), params);
    } catch (err) {
      if (unreachable(err)) throw new StoreUnavailableError((err as Error).message);
      throw err;
    }
  }

  async run(sql: string, params: unknown[] = []): Promise<{ changes: number }> {
    return { changes: (await this.query(sql, params)).rowCount ?? 0 };
  }

  async get<T>(sql: string, params: unknown[] = []): Promise<T | undefined> {
    return (await this.query(sql, params)).rows[0] as T | undefined;
  }

  async all<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    return (await this.query(sql, params)).rows as T[];
  }

  async notify(topic: ChangeTopic): Promise<void> {
    await this.query('SELECT pg_notify(?, ?)', [CHANNEL, topic]);
  }

  onChange(listener: (topic: ChangeTopic | 'resync') => void): void {
    this.listeners.push(listener);
  }

  private emit(topic: ChangeTopic | 'resync'): void {
    for (const listener of this.listeners) listener(topic);
  }

  /**
   * One connection outside the pool LISTENs. When it drops, caches are told
   * to re-read once a second (they may have missed notifications) while it is
   * re-established, and once more when it is back.
   */
  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 3000 });
    client.on('notification', (msg) => this.emit(msg.payload as ChangeTopic));
    client.on('error', () => this.listenerLost(client));
    client.on('end', () => this.listenerLost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (err) {
      client.end().catch(() => {});
      throw err;
    }
    this.listenClient = client;
  }

  private listenerLost(client: pg.Client): void {
    if (this.listenClient !== client) return;
    this.listenClient = null;
    this.notificationsLostAt = Date.now();
    client.end().catch(() => {});
    if (this.closed || this.resyncTimer) return;
    this.resyncTimer = setInterval(() => this.relisten(), RESYNC_MS);
    this.resyncTimer.unref();
    this.emit('resync');
  }

  private relisten(): void {
    this.emit('resync');
    if (this.connecting) return;
    this.connecting = true;
    this.listen()
      .then(() => {
        if (this.resyncTimer) clearInterval(this.resyncTimer);
        this.resyncTimer = null;
        if (this.closed) return void this.listenClient?.end().catch(() => {});
        this.notificationsLostAt = null;
        this.emit('resync');
      }, () => {})
      .finally(() => (this.connecting = false));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    const listener = this.listenClient;
    this.listenClient = null;
    await listener?.end().catch(() => {});
    await this.pool.end();
  }
}
