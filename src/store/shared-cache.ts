// Rows of a shared database (PostgreSQL, several replicas) kept in memory so
// that a request does not query it: emptied when any replica changes the
// table (a notification sent by the database in the writing transaction) and
// when notifications come back after a gap in which some may have been missed,
// and never trusted longer than MAX_AGE_MS, nor at all while notifications
// are not arriving; then the row is read again. If the database cannot be
// reached, a row read within the outage grace (STT_STORE_GRACE_S) keeps
// answering: a key revoked meanwhile through another replica too, the price
// of serving through an outage (0 turns it off). With SQLite
// (one process) nothing is kept: every read goes to the file.
import { StoreUnavailableError, type ChangeTopic, type Database } from './db';

/** A row is read again this long after it was last read, even with no change announced (a lost notification costs at most this). */
const MAX_AGE_MS = 30_000;
/** STT_STORE_GRACE_S's default: how long a row keeps answering while the database is unreachable, from the moment it was last read. */
export const DEFAULT_STORE_GRACE_S = 300;
export const OUTAGE_GRACE_MS = DEFAULT_STORE_GRACE_S * 1000;

export class SharedRowCache<T> {
  private readonly rows = new Map<string, { row: T; readAt: number }>();
  /** Counts every emptying: a row read before one is not kept after it (it may predate the change). */
  private generation = 0;

  constructor(private readonly db: Database, topic: ChangeTopic) {
    // A 'resync' once notifications flow again (sent after the listening connection is back): a row
    // read before the gap may predate a change nobody heard of, so none is kept past it. The resyncs
    // sent while the connection is lost keep the rows: during an outage they are what still answers.
    db.onChange((t) => {
      if (t === topic || (t === 'resync' && db.listening)) this.forget();
    });
  }

  /** After this process changed the table: forgotten here at once, elsewhere when the notification arrives. */
  forget(): void {
    this.rows.clear();
    this.generation++;
  }

  async read(key: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    if (!this.db.shared) return load();
    const cached = this.rows.get(key);
    const age = cached ? Date.now() - cached.readAt : Infinity;
    if (age < MAX_AGE_MS && this.db.listening) return cached!.row;
    // A known outage: answer from memory rather than wait on a connection attempt per request.
    if (age < this.db.outageGraceMs && this.db.unreachable) return cached!.row;
    const generation = this.generation;
    try {
      const row = await load();
      if (generation === this.generation) {
        if (this.rows.size > 10_000) this.rows.clear();
        if (row === undefined) this.rows.delete(key);
        else this.rows.set(key, { row, readAt: Date.now() });
      }
      return row;
    } catch (err) {
      if (err instanceof StoreUnavailableError && age < this.db.outageGraceMs) return cached!.row;
      throw err;
    }
  }
}
