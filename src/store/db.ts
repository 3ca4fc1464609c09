// The database behind the stores: a SQLite file in the data directory (the
// default: one process, nothing to install) or PostgreSQL shared by several
// replicas (STT_DATABASE_URL). The stores write the SQL both understand, with
// `?` placeholders; each backend keeps its own versioned migrations.
import { BusyError } from '../stt/errors';

/** What a change notification names: the stores whose rows another replica (or this one) changed. */
export type ChangeTopic = 'api_keys' | 'routing';

export interface Database {
  /** True when other processes share it and tell of their changes (PostgreSQL). */
  readonly shared: boolean;
  /** When change notifications stopped arriving (their connection dropped); null while they flow, and always for SQLite. */
  readonly notificationsLostAt: number | null;
  run(sql: string, params?: unknown[]): Promise<{ changes: number }>;
  get<T>(sql: string, params?: unknown[]): Promise<T | undefined>;
  all<T>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Tells every replica that `topic` changed. Nothing to tell with SQLite: one process reads it. */
  notify(topic: ChangeTopic): Promise<void>;
  /**
   * Called with each topic any replica changed, and with 'resync' when
   * notifications may have been missed (the notification connection dropped:
   * then once a second until it is back, and once when it is): a cache re-reads.
   */
  onChange(listener: (topic: ChangeTopic | 'resync') => void): void;
  close(): Promise<void>;
}

/** The shared database cannot be reached: 503, the request may be retried. */
export class StoreUnavailableError extends BusyError {
  constructor(cause: string) {
    super('store_unavailable', `The service's database cannot be reached (${cause}); try again shortly.`, 5);
  }
}
