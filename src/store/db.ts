// The database behind the stores: a SQLite file in the data directory (the
// default: one process, nothing to install) or PostgreSQL shared by several
// replicas (STT_DATABASE_URL). The stores write the SQL both understand, with
// `?` placeholders; each backend keeps its own versioned migrations.
import { BusyError } from '../domain-errors';

/** What a change notification names: the table whose rows some replica changed (sent by the database's own triggers). */
export type ChangeTopic = 'api_keys' | 'routing' | 'providers';

export interface Database {
  /** True when other processes share it and tell of their changes (PostgreSQL). */
  readonly shared: boolean;
  /** Change notifications are arriving (always false for SQLite, which has none). */
  readonly listening: boolean;
  /** The last attempt to reach it failed (always false for SQLite). */
  readonly unreachable: boolean;
  /** How long a cached row keeps answering while it cannot be reached (STT_STORE_GRACE_S; 0 for SQLite, which keeps none). */
  readonly outageGraceMs: number;
  run(sql: string, params?: unknown[]): Promise<{ changes: number }>;
  get<T>(sql: string, params?: unknown[]): Promise<T | undefined>;
  all<T>(sql: string, params?: unknown[]): Promise<T[]>;
  /**
   * Called with each topic any replica changed, and with 'resync' when
   * notifications may have been missed (the notification connection was lost:
   * then once a second until it is back, and once when it is).
   */
  onChange(listener: (topic: ChangeTopic | 'resync') => void): void;
  close(): Promise<void>;
}

/** The shared database cannot be reached: 503, the request may be retried. The cause is for logs, not clients. */
export class StoreUnavailableError extends BusyError {
  constructor(readonly detail: string) {
    super('store_unavailable', "The service's database cannot be reached; try again shortly.", 5);
  }
}

/**
 * The shared database is there but has no connection to give (PostgreSQL refused one more, or this
 * replica's pool stayed full): 503, retried. Not an outage: nothing is answered from memory or
 * counted by this replica alone, or load alone could turn that on.
 */
export class StoreBusyError extends BusyError {
  constructor(readonly detail: string) {
    super('store_busy', "The service's database is busy; try again shortly.", 1);
  }
}
