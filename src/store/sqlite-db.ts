// SQLite through sqlite3, with promise helpers and forward-only migrations
// (PRAGMA user_version): the default database, a file in the data directory
// that one process uses.
import sqlite3 from 'sqlite3';
import { closeSync, openSync } from 'node:fs';
import path from 'node:path';
import type { Database } from './db';

const MIGRATIONS: string[] = [
  `CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   CREATE TABLE api_keys (
     id TEXT PRIMARY KEY, name TEXT NOT NULL, prefix TEXT NOT NULL UNIQUE, hash TEXT NOT NULL,
     created_at TEXT NOT NULL, last_used_at TEXT, revoked_at TEXT);
   CREATE TABLE providers (
     id TEXT PRIMARY KEY, name TEXT NOT NULL, kind TEXT NOT NULL, base_url TEXT NOT NULL,
     enabled INTEGER NOT NULL DEFAULT 0, api_key_enc TEXT, api_key_hint TEXT,
     models TEXT NOT NULL DEFAULT '[]', created_at TEXT NOT NULL, updated_at TEXT NOT NULL);`,
  // Per-key limits (NULL: none) and usage per key and UTC day.
  `ALTER TABLE api_keys ADD COLUMN requests_per_minute INTEGER;
   ALTER TABLE api_keys ADD COLUMN audio_seconds_per_day INTEGER;
   ALTER TABLE api_keys ADD COLUMN local_only INTEGER NOT NULL DEFAULT 0;
   CREATE TABLE key_usage (
     key_id TEXT NOT NULL, day TEXT NOT NULL, requests INTEGER NOT NULL DEFAULT 0,
     audio_seconds REAL NOT NULL DEFAULT 0, errors INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (key_id, day));`,
  // Long recordings as jobs (store/jobs.ts); times in epoch milliseconds, as both backends compare them.
  `CREATE TABLE jobs (
     id TEXT PRIMARY KEY, key_id TEXT NOT NULL, status TEXT NOT NULL, form TEXT NOT NULL, spool TEXT,
     seconds_total REAL NOT NULL, seconds_done REAL NOT NULL DEFAULT 0, partial TEXT,
     result TEXT, error TEXT, callback_url TEXT, callback_state TEXT, callback_attempts INTEGER NOT NULL DEFAULT 0, callback_next_at BIGINT,
     lease_owner TEXT, lease_until BIGINT,
     created_at BIGINT NOT NULL, started_at BIGINT, finished_at BIGINT);
   CREATE INDEX jobs_by_status ON jobs (status, created_at);
   CREATE INDEX jobs_by_key ON jobs (key_id, created_at);
   CREATE INDEX jobs_callbacks_due ON jobs (callback_next_at) WHERE callback_state = 'pending';`,
  // Times a process took a job up and did not hand it back (store/jobs.ts: claim, release).
  `ALTER TABLE jobs ADD COLUMN starts INTEGER NOT NULL DEFAULT 0;`,
];

export class SqliteDatabase implements Database {
  readonly shared = false;
  readonly listening = false;
  readonly unreachable = false;
  readonly outageGraceMs = 0;

  private constructor(private readonly db: sqlite3.Database) {}

  static async open(dataDir: string): Promise<SqliteDatabase> {
    const file = path.join(dataDir, 'stt-gateway.sqlite');
    // Made 0600 before SQLite opens it (its -wal and -shm files take the same mode): it holds job
    // transcripts and callback URLs. An existing file keeps the mode its host gave it.
    closeSync(openSync(file, 'a', 0o600));
    const raw = await new Promise<sqlite3.Database>((resolve, reject) => {
      const d = new sqlite3.Database(file, (err) => (err ? reject(err) : resolve(d)));
    });
    const db = new SqliteDatabase(raw);
    raw.configure('busyTimeout', 5000);
    await db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;');
    await db.migrate();
    return db;
  }

  private async migrate(): Promise<void> {
    const row = await this.get<{ user_version: number }>('PRAGMA user_version');
    for (let v = row?.user_version ?? 0; v < MIGRATIONS.length; v++) {
      await this.transaction(async () => {
        await this.exec(MIGRATIONS[v]);
        await this.exec(`PRAGMA user_version = ${v + 1}`);
      });
    }
  }

  exec(sql: string): Promise<void> {
    return new Promise((resolve, reject) => this.db.exec(sql, (err) => (err ? reject(err) : resolve())));
  }

  run(sql: string, params: unknown[] = []): Promise<{ changes: number }> {
    return new Promise((resolve, reject) =>
      this.db.run(sql, params, function (this: sqlite3.RunResult, err: Error | null) {
        if (err) reject(err);
        else resolve({ changes: this.changes });
      }),
    );
  }

  get<T>(sql: string, params: unknown[] = []): Promise<T | undefined> {
    return new Promise((resolve, reject) => this.db.get(sql, params, (err, row) => (err ? reject(err) : resolve(row as T | undefined))));
  }

  all<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    return new Promise((resolve, reject) => this.db.all(sql, params, (err, rows) => (err ? reject(err) : resolve(rows as T[]))));
  }

  /** Runs fn inside BEGIN IMMEDIATE/COMMIT. Calls are serialised so transactions never interleave. */
  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    const previous = this.queue;
    let release!: () => void;
    this.queue = new Promise<void>((r) => (release = r));
    await previous;
    try {
      await this.exec('BEGIN IMMEDIATE');
      try {
        const result = await fn();
        await this.exec('COMMIT');
        return result;
      } catch (err) {
        await this.exec('ROLLBACK');
        throw err;
      }
    } finally {
      release();
    }
  }
  private queue: Promise<void> = Promise.resolve();

  // One process: nothing to be told (the admin CLI's routing changes reach
  // the server through its poll, services.ts).
  onChange(): void {}

  close(): Promise<void> {
    return new Promise((resolve, reject) => this.db.close((err) => (err ? reject(err) : resolve())));
  }
}
