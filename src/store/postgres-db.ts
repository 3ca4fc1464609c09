// PostgreSQL through node-postgres (a pool of connections), for several
// replicas sharing one database: migrations applied at start under an
// advisory lock (replicas starting together: one migrates, the others wait),
// and change notifications through LISTEN/NOTIFY on one dedicated
// connection, pinged every few seconds (a half-open socket raises no error)
// and re-established when lost. The notifications come from triggers, so a
// change and its notification commit together: no write can land unannounced.
import pg from 'pg';
import { StoreBusyError, StoreUnavailableError, type ChangeTopic, type Database } from './db';

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
  // Change notifications, sent in the writing transaction. A key's last use
  // (written every 10 s per key and replica) is not a change any cache holds.
  `CREATE FUNCTION stt_notify() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN PERFORM pg_notify('stt_changes', TG_ARGV[0]); RETURN NULL; END $$; -- CHANNEL
   CREATE TRIGGER api_keys_added AFTER INSERT OR DELETE ON api_keys FOR EACH ROW EXECUTE FUNCTION stt_notify('api_keys');
   CREATE TRIGGER api_keys_changed AFTER UPDATE ON api_keys FOR EACH ROW
     WHEN ((OLD.revoked_at, OLD.requests_per_minute, OLD.audio_seconds_per_day, OLD.local_only, OLD.hash, OLD.prefix)
       IS DISTINCT FROM (NEW.revoked_at, NEW.requests_per_minute, NEW.audio_seconds_per_day, NEW.local_only, NEW.hash, NEW.prefix))
     EXECUTE FUNCTION stt_notify('api_keys');
   CREATE TRIGGER routing_changed AFTER INSERT OR UPDATE ON settings FOR EACH ROW WHEN (NEW.key = 'routing') EXECUTE FUNCTION stt_notify('routing');
   CREATE TRIGGER providers_changed AFTER INSERT OR UPDATE OR DELETE ON providers FOR EACH ROW EXECUTE FUNCTION stt_notify('providers');`,
  // Long recordings as jobs (store/jobs.ts), as in sqlite-db.ts.
  `CREATE TABLE jobs (
     id TEXT PRIMARY KEY, key_id TEXT NOT NULL, status TEXT NOT NULL, form TEXT NOT NULL, spool TEXT,
     seconds_total DOUBLE PRECISION NOT NULL, seconds_done DOUBLE PRECISION NOT NULL DEFAULT 0, partial TEXT,
     result TEXT, error TEXT, callback_url TEXT, callback_state TEXT, callback_attempts INTEGER NOT NULL DEFAULT 0, callback_next_at BIGINT,
     lease_owner TEXT, lease_until BIGINT,
     created_at BIGINT NOT NULL, started_at BIGINT, finished_at BIGINT);
   CREATE INDEX jobs_by_status ON jobs (status, created_at);
   CREATE INDEX jobs_by_key ON jobs (key_id, created_at);
   CREATE INDEX jobs_callbacks_due ON jobs (callback_next_at) WHERE callback_state = 'pending';`,
  `ALTER TABLE jobs ADD COLUMN starts INTEGER NOT NULL DEFAULT 0;`,
];

/** The schema version a migrated database records. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** pg_advisory_lock's key for migrations: any constant that no other application on the database uses. */
const MIGRATION_LOCK = 0x5717_0001;
const CHANNEL = 'stt_changes';
const RESYNC_MS = 1000;
/** How often the notification connection is asked whether it is alive, and how long it may take to say so. */
const PING_MS = 3000;
const PING_TIMEOUT_MS = 2000;

/** `?` placeholders (the SQL both backends share) as PostgreSQL's `$1, $2, ...`; the stores put no `?` inside literals. */
const numbered = (sql: string): string => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

/** pg-pool's error when every pooled connection stayed in use for connectionTimeoutMillis: the server was not asked. */
const CHECKOUT_TIMEOUT = 'timeout exceeded when trying to connect';

/**
 * What a failed query says about the server: 'unreachable' (it cannot be connected to or is going away:
 * outage mode), 'busy' (it answered, with no connection to spare), or null (the query itself failed).
 */
function failure(err: unknown, knownUnreachable: boolean): 'unreachable' | 'busy' | null {
  const e = err as { code?: string; message?: string };
  // A full pool says nothing of the server: in a known outage it is full of connection attempts timing out.
  if (e.message === CHECKOUT_TIMEOUT) return knownUnreachable ? 'unreachable' : 'busy';
  // Too many connections (53300: max_connections, or the role's or database's CONNECTION LIMIT): refused by a server that is up.
  if (e.code === '53300') return 'busy';
  // Connection refused, reset or timed out; DNS failures (EAI_AGAIN when a container's name stops resolving); server shutting down
  // (57P01-03), connection exceptions (08xxx).
  if (typeof e.code === 'string' && /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|57P0[1-3]|08\d\d\d)$/.test(e.code)) return 'unreachable';
  // pg-pool's "Connection terminated due to connection timeout" is a connection attempt that got no answer.
  return /Connection terminated|Client has encountered a connection error/i.test(e.message ?? '') ? 'unreachable' : null;
}

export class PostgresDatabase implements Database {
  readonly shared = true;
  unreachable = false;
  private readonly listeners: ((topic: ChangeTopic | 'resync') => void)[] = [];
  private listenClient: pg.Client | null = null;
  private resyncTimer: NodeJS.Timeout | null = null;
  private connecting = false;
  private pingTimer: NodeJS.Timeout | null = null;
  private closed = false;

  private constructor(
    private readonly url: string,
    private readonly pool: pg.Pool,
    readonly outageGraceMs: number,
  ) {}

  static async open(url: string, outageGraceMs: number): Promise<PostgresDatabase> {
    const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 3000, idleTimeoutMillis: 30_000 });
    // An idle connection the server dropped: the pool replaces it; without a handler the process would exit.
    pool.on('error', () => {});
    const db = new PostgresDatabase(url, pool, outageGraceMs);
    try {
      await db.migrate();
      await db.listen();
    } catch (err) {
      await db.close();
      throw err;
    }
    db.pingTimer = setInterval(() => db.ping(), PING_MS).unref();
    return db;
  }

  private async migrate(): Promise<void> {
    const client = await this.pool.connect();
    let clean = false;
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
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
      clean = true;
    } finally {
      // A connection that may still hold the lock (or sit in a failed transaction) is closed, never pooled:
      // closing it is what releases the lock for the replicas waiting on it.
      client.release(!clean);
    }
  }

  private async query<T extends pg.QueryResultRow>(sql: string, params: unknown[]): Promise<pg.QueryResult<T>> {
    try {
      const result = await this.pool.query<T>(numbered(sql), params);
      this.unreachable = false;
      return result;
    } catch (err) {
      const kind = failure(err, this.unreachable);
      if (kind === 'busy') throw new StoreBusyError((err as Error).message);
      if (!kind) throw err;
      this.unreachable = true;
      throw new StoreUnavailableError((err as Error).message);
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

  get listening(): boolean {
    return this.listenClient !== null;
  }

  onChange(listener: (topic: ChangeTopic | 'resync') => void): void {
    this.listeners.push(listener);
  }

  private emit(topic: ChangeTopic | 'resync'): void {
    for (const listener of this.listeners) listener(topic);
  }

  /**
   * One connection outside the pool LISTENs. While it is lost, caches read
   * the database instead of trusting memory (`listening` is false), and
   * 'resync' is sent once a second (the routing is read again) until it is
   * re-established, and once more when it is.
   */
  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 3000, keepAlive: true });
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
    this.unreachable = false;
  }

  /** A notification connection that cannot answer SELECT 1 in time is lost, whatever its socket says. */
  private ping(): void {
    const client = this.listenClient;
    if (!client) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('ping timed out')), PING_TIMEOUT_MS)));
    Promise.race([client.query('SELECT 1'), late]).then(() => clearTimeout(timer), () => {
      clearTimeout(timer);
      this.listenerLost(client);
    });
  }

  private listenerLost(client: pg.Client): void {
    if (this.listenClient !== client) return;
    this.listenClient = null;
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
        this.emit('resync');
      }, () => {})
      .finally(() => (this.connecting = false));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    if (this.pingTimer) clearInterval(this.pingTimer);
    const listener = this.listenClient;
    this.listenClient = null;
    await listener?.end().catch(() => {});
    await this.pool.end();
  }
}
