// Which database the stores use: PostgreSQL when STT_DATABASE_URL names one
// (several replicas sharing it), otherwise the SQLite file in the data directory.
import type { Database } from './db';
import { PostgresDatabase } from './postgres-db';
import { SqliteDatabase } from './sqlite-db';

export function openDatabase(options: { dataDir: string; databaseUrl: string | null }): Promise<Database> {
  return options.databaseUrl ? PostgresDatabase.open(options.databaseUrl) : SqliteDatabase.open(options.dataDir);
}
