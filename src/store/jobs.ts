// Long recordings as jobs (docs/decisions/048-jobs-plan.md): one row per job,
// in SQLite or the shared PostgreSQL. A process runs a job while it holds the
// job's lease (lease_owner, lease_until), renewed as it runs; a lease that
// ran out (its process died) lets any process claim the job again. Every
// change of a running job names its owner, so a process that lost its lease
// cannot write over the one that took the job. Times are epoch milliseconds.
import type { Database } from './db';

export type JobStatus = 'queued' | 'running' | 'done' | 'failed' | 'cancelled';
/** A job with a callback URL: its callback is pending from when the job ends until delivered or given up. */
export type CallbackState = 'pending' | 'delivered' | 'failed';
const ENDED: JobStatus[] = ['done', 'failed', 'cancelled'];

export interface Job {
  id: string;
  keyId: string;
  status: JobStatus;
  /** The request's fields, as the route parsed them (JSON). */
  form: string;
  /**
   * The uploaded file, by its name in the spool (STT_SPOOL_DIR, where each
   * replica may mount the shared directory at another path); null once removed.
   */
  spool: string | null;
  secondsTotal: number;
  secondsDone: number;
  /** The run's last checkpoint (JSON, src/jobs/checkpoints.ts), for a restarted job to resume from. */
  partial: string | null;
  /** The answer in the job's response_format, once done. */
  result: string | null;
  /** The error envelope (JSON), once failed. */
  error: string | null;
  callbackUrl: string | null;
  callbackState: CallbackState | null;
  /** Delivery attempts made so far. */
  callbackAttempts: number;
  /** Times a process took the job up and did not hand it back (it died, or lost the lease): a job that kills its process ends failed. */
  starts: number;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
}

/** A job as a list reads it: without its answer and checkpoint (JobStore.list). */
export type ListedJob = Job & { result: null; partial: null };

interface Row {
  id: string;
  key_id: string;
  status: string;
  form: string;
  spool: string | null;
  seconds_total: number;
  seconds_done: number;
  partial: string | null;
  result: string | null;
  error: string | null;
  callback_url: string | null;
  callback_state: string | null;
  callback_attempts: number | string;
  starts: number | string;
  created_at: number | string;
  started_at: number | string | null;
  finished_at: number | string | null;
}

// PostgreSQL returns BIGINT as a string.
const time = (v: number | string | null): number | null => (v === null ? null : Number(v));

function toJob(r: Row): Job {
  return {
    id: r.id, keyId: r.key_id, status: r.status as JobStatus, form: r.form, spool: r.spool,
    secondsTotal: r.seconds_total, secondsDone: r.seconds_done, partial: r.partial, result: r.result, error: r.error,
    callbackUrl: r.callback_url, callbackState: r.callback_state as CallbackState | null, callbackAttempts: Number(r.callback_attempts), starts: Number(r.starts), createdAt: Number(r.created_at), startedAt: time(r.started_at), finishedAt: time(r.finished_at),
  };
}

export interface NewJob {
  id: string;
  keyId: string;
  form: string;
  spool: string;
  secondsTotal: number;
  callbackUrl: string | null;
}

export class JobStore {
  constructor(private readonly db: Database, private readonly now: () => number = Date.now) {}

  async create(job: NewJob): Promise<Job> {
    const at = this.now();
    await this.db.run(
      `INSERT INTO jobs (id, key_id, status, form, spool, seconds_total, callback_url, created_at) VALUES (?, ?, 'queued', ?, ?, ?, ?, ?)`,
      [job.id, job.keyId, job.form, job.spool, job.secondsTotal, job.callbackUrl, at],
    );
    return (await this.get(job.id))!;
  }

  /** The job, if `keyId` (when given) owns it: another key's job is as absent as a missing one. */
  async get(id: string, keyId?: string): Promise<Job | undefined> {
    const row = keyId === undefined
      ? await this.db.get<Row>('SELECT * FROM jobs WHERE id = ?', [id])
      : await this.db.get<Row>('SELECT * FROM jobs WHERE id = ? AND key_id = ?', [id, keyId]);
    return row && toJob(row);
  }

  /**
   * Newest first; `after`: only jobs listed after that one (the next page), in
   * the same order (time, then id). Without their answers and checkpoints
   * (`result` and `partial` null): a long recording's answer can be megabytes,
   * and a page of 50 of them would be read into memory for a list.
   */
  async list(keyId: string | null, limit: number, after?: Pick<Job, 'createdAt' | 'id'>): Promise<ListedJob[]> {
    const where = [keyId === null ? null : 'key_id = ?', after === undefined ? null : '(created_at < ? OR (created_at = ? AND id < ?))'].filter(Boolean);
    const params = [...(keyId === null ? [] : [keyId]), ...(after === undefined ? [] : [after.createdAt, after.createdAt, after.id]), limit];
    const columns = `id, key_id, status, form, spool, seconds_total, seconds_done, NULL AS partial, NULL AS result, error, callback_url, callback_state,
      callback_attempts, starts, created_at, started_at, finished_at`;
    const rows = await this.db.all<Row>(`SELECT ${columns} FROM jobs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT ?`, params);
    return rows.map((r) => ({ ...toJob(r), result: null, partial: null }));
  }

  /** Where a job of `keyId` sits in its lists (a page's `after`), without reading the job itself. */
  async position(id: string, keyId: string): Promise<Pick<Job, 'createdAt' | 'id'> | undefined> {
    const row = await this.db.get<{ id: string; created_at: number | string }>('SELECT id, created_at FROM jobs WHERE id = ? AND key_id = ?', [id, keyId]);
    return row && { id: row.id, createdAt: Number(row.created_at) };
  }

  /**
   * Takes the next job that is queued, or running under a lease that ran
   * out, for `owner` until now + leaseMs. Undefined when there is none, or
   * another process took it first (the update names the state it read).
   * Jobs that had started (put back by a restart, or left by a replica that
   * died) go on first; then keys take turns: the oldest job of the key with
   * the fewest jobs running (on any replica), and of those the key whose
   * last job started longest ago (or never).
   */
  async claim(owner: string, leaseMs: number): Promise<Job | undefined> {
    const at = this.now();
    const row = await this.db.get<{ id: string }>(
      `SELECT id FROM jobs WHERE status = 'queued' OR (status = 'running' AND lease_until < ?)
       ORDER BY CASE WHEN started_at IS NULL THEN 1 ELSE 0 END,
                (SELECT COUNT(*) FROM jobs r WHERE r.key_id = jobs.key_id AND r.status = 'running' AND r.lease_until >= ?),
                COALESCE((SELECT MAX(k.started_at) FROM jobs k WHERE k.key_id = jobs.key_id), 0), created_at, id LIMIT 1`, [at, at]);
    if (!row) return undefined;
    const { changes } = await this.db.run(
      `UPDATE jobs SET status = 'running', lease_owner = ?, lease_until = ?, started_at = COALESCE(started_at, ?), starts = starts + 1
       WHERE id = ? AND (status = 'queued' OR (status = 'running' AND lease_until < ?))`,
      [owner, at + leaseMs, at, row.id, at],
    );
    return changes === 1 ? this.get(row.id) : undefined;
  }

  /** False when `owner` no longer holds the job (its lease ran out and another took it, or it was cancelled). */
  async renew(id: string, owner: string, leaseMs: number): Promise<boolean> {
    const { changes } = await this.db.run(
      `UPDATE jobs SET lease_until = ? WHERE id = ? AND lease_owner = ? AND status = 'running'`, [this.now() + leaseMs, id, owner]);
    return changes === 1;
  }

  /** A checkpoint: how far the job got, and what it gave so far (null: it starts over). */
  async progress(id: string, owner: string, secondsDone: number, partial: string | null): Promise<boolean> {
    const { changes } = await this.db.run(
      `UPDATE jobs SET seconds_done = ?, partial = ? WHERE id = ? AND lease_owner = ? AND status = 'running'`, [secondsDone, partial, id, owner]);
    return changes === 1;
  }

  async finish(id: string, owner: string, result: string): Promise<boolean> {
    return this.end(id, owner, 'done', { result, seconds_done: null });
  }

  async fail(id: string, owner: string, error: string): Promise<boolean> {
    return this.end(id, owner, 'failed', { error });
  }

  /** Back to the queue (this process is shutting down), handed back cleanly: another start, or another replica, takes it from its last checkpoint. */
  async release(id: string, owner: string): Promise<boolean> {
    const { changes } = await this.db.run(
      `UPDATE jobs SET status = 'queued', lease_owner = NULL, lease_until = NULL, starts = starts - 1
       WHERE id = ? AND lease_owner = ? AND status = 'running'`, [id, owner]);
    return changes === 1;
  }

  /** Cancels a job that has not ended; undefined when there is none (or it ended). Returns it as it was. Callers check whose it is. */
  async cancel(id: string): Promise<Job | undefined> {
    const job = await this.get(id);
    if (!job || ENDED.includes(job.status)) return undefined;
    const { changes } = await this.db.run(
      `UPDATE jobs SET status = 'cancelled', lease_owner = NULL, lease_until = NULL, finished_at = ? WHERE id = ? AND status IN ('queued', 'running')`,
      [this.now(), id]);
    return changes === 1 ? job : undefined;
  }

  /** Removes an ended job (its answer with it); false when there is none. Callers check whose it is. */
  async remove(id: string): Promise<boolean> {
    const { changes } = await this.db.run(`DELETE FROM jobs WHERE id = ? AND status IN ('done', 'failed', 'cancelled')`, [id]);
    return changes === 1;
  }

  /** The spool file is gone (the job ended, or was cancelled). */
  async forgetSpool(id: string): Promise<void> {
    await this.db.run('UPDATE jobs SET spool = NULL WHERE id = ?', [id]);
  }

  /**
   * One process alone on its database (SQLite) at start: every job that was
   * running belonged to a process that is gone, and is queued again.
   */
  async requeueRunning(): Promise<number> {
    const { changes } = await this.db.run(`UPDATE jobs SET status = 'queued', lease_owner = NULL, lease_until = NULL WHERE status = 'running'`);
    return changes;
  }

  /** Removes the jobs that ended before `before`; returns their spool files still on disk. */
  async sweep(before: number): Promise<string[]> {
    // A callback still being retried keeps its job.
    const ended = `status IN ('done', 'failed', 'cancelled') AND finished_at < ? AND (callback_state IS NULL OR callback_state <> 'pending')`;
    const rows = await this.db.all<{ id: string; spool: string | null }>(`SELECT id, spool FROM jobs WHERE ${ended}`, [before]);
    if (rows.length) await this.db.run(`DELETE FROM jobs WHERE ${ended}`, [before]);
    return rows.map((r) => r.spool).filter((s): s is string => s !== null);
  }

  /** The key's jobs that have not ended, or whose callback is still being delivered. */
  async unfinished(keyId: string): Promise<number> {
    const row = await this.db.get<{ n: number | string }>(
      `SELECT COUNT(*) AS n FROM jobs WHERE key_id = ? AND (status IN ('queued', 'running') OR callback_state = 'pending')`, [keyId]);
    return Number(row?.n ?? 0);
  }

  /** Queued and running jobs, and the age of the oldest queued one (for metrics and /admin/status). */
  async counts(): Promise<{ queued: number; running: number; oldestQueuedMs: number | null }> {
    const rows = await this.db.all<{ status: string; n: number | string; oldest: number | string | null }>(
      `SELECT status, COUNT(*) AS n, MIN(created_at) AS oldest FROM jobs WHERE status IN ('queued', 'running') GROUP BY status`);
    const of = (s: string) => rows.find((r) => r.status === s);
    const oldest = of('queued')?.oldest;
    return {
      queued: Number(of('queued')?.n ?? 0),
      running: Number(of('running')?.n ?? 0),
      oldestQueuedMs: oldest === undefined || oldest === null ? null : this.now() - Number(oldest),
    };
  }

  private async end(id: string, owner: string, status: 'done' | 'failed', fields: { result?: string; error?: string; seconds_done?: null }): Promise<boolean> {
    const at = this.now();
    const { changes } = await this.db.run(
      `UPDATE jobs SET status = ?, result = ?, error = ?, seconds_done = ${fields.seconds_done === null ? 'seconds_total' : 'seconds_done'},
       partial = NULL, lease_owner = NULL, lease_until = NULL, finished_at = ?,
       callback_state = CASE WHEN callback_url IS NULL THEN NULL ELSE 'pending' END, callback_next_at = ?
       WHERE id = ? AND lease_owner = ? AND status = 'running'`,
      [status, fields.result ?? null, fields.error ?? null, at, at, id, owner],
    );
    return changes === 1;
  }

  /**
   * The job whose callback is due soonest, taken for one attempt until
   * now + holdMs (another process that looks meanwhile passes it by);
   * undefined when none is due, or another process took it first.
   */
  async claimCallback(holdMs: number, busyKeys: readonly string[] = []): Promise<{ job: Job; hold: number } | undefined> {
    const at = this.now();
    // One attempt at a time per key (`busyKeys` have one in flight here): a key whose receiver hangs delays only its own.
    const notBusy = busyKeys.length ? `AND key_id NOT IN (${busyKeys.map(() => '?').join(', ')})` : '';
    const row = await this.db.get<{ id: string; callback_next_at: number | string }>(
      `SELECT id, callback_next_at FROM jobs WHERE callback_state = 'pending' AND callback_next_at <= ? ${notBusy} ORDER BY callback_next_at, id LIMIT 1`, [at, ...busyKeys]);
    if (!row) return undefined;
    const hold = at + holdMs;
    const { changes } = await this.db.run(
      `UPDATE jobs SET callback_next_at = ? WHERE id = ? AND callback_state = 'pending' AND callback_next_at = ?`, [hold, row.id, Number(row.callback_next_at)]);
    const job = changes === 1 ? await this.get(row.id) : undefined;
    return job && { job, hold };
  }

  /**
   * An attempt's outcome: delivered, given up, or tried again at `retryAt`.
   * Recorded only while the attempt's hold stands: an attempt that outlived
   * it (and was made again elsewhere) does not overwrite the newer one.
   */
  async callbackAttempted(id: string, hold: number, outcome: { delivered: true } | { delivered: false; retryAt: number | null }): Promise<void> {
    const state: CallbackState = outcome.delivered ? 'delivered' : outcome.retryAt === null ? 'failed' : 'pending';
    const next = outcome.delivered ? null : outcome.retryAt;
    await this.db.run(
      `UPDATE jobs SET callback_state = ?, callback_attempts = callback_attempts + 1, callback_next_at = ?
       WHERE id = ? AND callback_state = 'pending' AND callback_next_at = ?`, [state, next, id, hold]);
  }
}
