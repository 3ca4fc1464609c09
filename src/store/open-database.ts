// Which database the stores use: PostgreSQL when STT_DATABASE_URL names one
// (several replicas sharing it), otherwise the SQLite file in the data directory.
import type { Database } from './db';
import { PostgresDatabase } from './postgres-db';
import { SqliteDatabase } from './sqlite-db';
import { DEFAULT_STORE_GRACE_S } from './shared-cache';

export function openDatabase(options: { dataDir: string; databaseUrl: string | null; storeGraceSeconds?: number }): Promise<Database> {
  const graceMs = (options.storeGraceSeconds ?? DEFAULT_STORE_GRACE_S) * 1000;
  return options.databaseUrl ? PostgresDatabase.open(options.databaseUrl, graceMs) : SqliteDatabase.open(options.dataDir);
}
