// Runs the jobs of the jobs API (docs/api.md#jobs-long-recordings), one at a
// time per process: claims the next job with a lease in the database (keys
// take turns: JobStore.claim), decodes its
// spooled recording, transcribes it in the local scheduler's background lane
// (behind every request), records a checkpoint after each 30-s window so a
// restart resumes there, and stores the answer rendered in the job's format.
// The lease is renewed while the job runs; a job whose lease this process
// lost, or that was cancelled, is dropped at the next renewal or checkpoint.
// On shutdown the running job goes back to the queue.
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { decodeSpooled } from './spooled-audio';
import { WavError } from '../native';
import { AbortedError, BackendError, BusyError } from '../domain-errors';
import { ApiError } from '../http/api-error';
import { invalidAudio, knownApiError } from '../http/error-map';
import { render, type ResponseFormat } from '../stt/formats';
import { localOptions, presentLocal, type Backends } from '../stt/backends';
import { EvictedError } from '../stt/local/scheduler';
import { StaleCheckpointError } from '../stt/local/engine';
import type { Semaphore } from '../stt/semaphore';
import type { Granularity, Task } from '../stt/capabilities';
import type { ChunkingStrategy } from '../stt/chunking';
import type { Job, JobStore } from '../store/jobs';
import type { Logger } from '../log';
import { WakeableWait } from './wakeable-wait';
import { Checkpoints } from './checkpoints';

const RATE = 16_000;
/** How often an idle runner looks for jobs other replicas queued (its own submissions wake it at once). */
const POLL_MS = 5_000;
/** How long a job the runtime could not take yet (a model loading) waits before it is tried again. */
const BUSY_RETRY_MS = 5_000;
/** Waits before asking a store that failed to store a finished job's answer again: about a minute in all. */
const FINISH_RETRY_MS = [1_000, 5_000, 15_000, 30_000];
const SWEEP_MS = 60 * 60 * 1000;
/** A spool file no job holds, untouched this long, belongs to no request either. */
const ORPHAN_MS = 6 * 60 * 60 * 1000;
/** A job taken up this many times without being handed back (its process died each time) is not tried again. */
export const MAX_STARTS = 3;

/** The request's fields as a job keeps them (the route's parse of the form). */
export interface JobForm {
  task: Task;
  format: ResponseFormat;
  language?: string;
  prompt?: string;
  temperature?: number;
  granularities: Granularity[];
  chunkingStrategy?: ChunkingStrategy;
}

export interface JobRunnerOptions {
  store: JobStore;
  stt: Backends;
  /** The server's decode slots (Services.decodeSlots), shared with the transcription routes. */
  decodeSlots: Semaphore;
  /** Where uploads are spooled (STT_SPOOL_DIR). */
  spoolDir: string;
  /** This process's replica id: the lease owner. */
  owner: string;
  maxAudioSeconds: number;
  retentionMs: number;
  /** How long a lease outlives its last renewal (STT_JOB_LEASE_SECONDS); renewed three times as often, so a busy event loop does not lose it. */
  leaseMs: number;
  /** SQLite, one process: jobs left running by a process that is gone are queued again at start. */
  alone: boolean;
  logger: Logger;
  /** A job ended here (its callback, if it has one, is due). */
  onEnded?: (outcome: 'done' | 'failed') => void;
  /** Whether the key that submitted a job was revoked (or removed) since: its jobs are cancelled, not run. */
  keyRevoked?: (keyId: string) => Promise<boolean>;
  /** Waits between attempts to store a finished job's answer (FINISH_RETRY_MS unless set; tests shorten them). */
  finishRetryMs?: number[];
}

export class JobRunner {
  private stopping = false;
  private loop: Promise<void> | null = null;
  private readonly pause = new WakeableWait();
  private running: { id: string; abort: AbortController } | null = null;
  private sweeper: NodeJS.Timeout | null = null;

  constructor(private readonly o: JobRunnerOptions) {}

  async start(): Promise<void> {
    if (this.o.alone) {
      const requeued = await this.o.store.requeueRunning();
      if (requeued) this.o.logger.info({ jobs: requeued }, 'jobs left running by the last process queued again');
    }
    await this.sweep();
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_MS).unref();
    this.loop = this.work();
  }

  /** A job was submitted: look now rather than at the next poll. */
  wake(): void {
    this.pause.wake();
  }

  /** Stops the job if it runs here (it was cancelled). */
  cancel(id: string): void {
    if (this.running?.id === id) this.running.abort.abort();
  }

  /** Ends the loop; a running job is aborted and queued again. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.sweeper) clearInterval(this.sweeper);
    this.running?.abort.abort();
    this.wake();
    await this.loop;
  }

  /**
   * Hands a job back to the queue unended. A store that fails the release is
   * let be: the lease runs out and the job is claimed again (counted as a
   * start, as a process that died with it would be).
   */
  private async handBack(job: Job): Promise<void> {
    await this.o.store.release(job.id, this.o.owner).catch((err: Error) => {
      this.o.logger.warn({ jobId: job.id, err: err.message }, 'job runner: could not hand a job back; it runs again once its lease ends');
    });
  }

  private async work(): Promise<void> {
    while (!this.stopping) {
      try {
        const job = await this.o.store.claim(this.o.owner, this.o.leaseMs);
        // stop() came while the claim was on its way: the job goes straight back.
        if (job && this.stopping) await this.handBack(job);
        else if (job) await this.run(job);
        else await this.pause.wait(POLL_MS);
      } catch (err) {
        // The database failed us (claim, or the job's last write): the job's lease runs out and it is claimed again.
        this.o.logger.warn({ err: (err as Error).message }, 'job runner: a database call failed');
        await this.pause.wait(POLL_MS);
      }
    }
  }

  private async run(job: Job): Promise<void> {
    if (job.starts > MAX_STARTS) return this.giveUp(job);
    // A store that cannot answer runs the job (as sessions keep serving a key they read): only a revocation read cancels it.
    if (await this.o.keyRevoked?.(job.keyId).catch(() => false)) return this.cancelRevoked(job);
    // stop() came while the key was read: it found nothing running to abort, so the job goes back unrun.
    if (this.stopping) return this.handBack(job);
    const abort = new AbortController();
    this.running = { id: job.id, abort };
    const renew = setInterval(() => {
      this.o.store.renew(job.id, this.o.owner, this.o.leaseMs).then(
        (held) => held || abort.abort(),
        (err) => this.o.logger.warn({ jobId: job.id, err: (err as Error).message }, 'could not renew a job\'s lease'),
      );
    }, this.o.leaseMs / 3);
    const log = this.o.logger.child({ jobId: job.id });
    try {
      const result = await this.transcribe(job, abort.signal);
      if (result === null) return; // cancelled, or the lease went to another process
      await this.record(job, result, log, abort.signal);
    } catch (err) {
      if (abort.signal.aborted || err instanceof AbortedError) {
        // Shutting down: back to the queue, to resume from its last checkpoint. Cancelled: nothing more to do.
        if (this.stopping) await this.handBack(job);
      } else if (err instanceof BusyError) {
        // The runtime cannot take it yet (a model loading): queued again, tried after a pause.
        await this.handBack(job);
        if (!this.stopping) await this.pause.wait(BUSY_RETRY_MS);
      } else {
        const api = err instanceof WavError ? invalidAudio(err, log) : knownApiError(err);
        if (!api) log.error({ err: (err as Error).message }, 'job failed');
        const envelope = (api ?? new ApiError(500, 'internal_error', 'The job failed; the server log has the detail.')).toBody();
        if (await this.o.store.fail(job.id, this.o.owner, JSON.stringify(envelope))) {
          await this.dropSpool(job);
          this.o.onEnded?.('failed');
        }
      }
    } finally {
      clearInterval(renew);
      this.running = null;
    }
  }

  /**
   * Stores a job's answer. A store that fails the write (a full disk, a
   * lock held past the busy timeout, a lost connection) is asked again
   * while the job's lease is held (renewed meanwhile): a transcript that was
   * made is not thrown away for a moment's trouble. Stopping hands the job
   * back, to run again from its last checkpoint; a store that refuses it
   * every time fails the job as `result_not_stored`.
   */
  private async record(job: Job, result: string, log: Logger, signal: AbortSignal): Promise<void> {
    const retries = this.o.finishRetryMs ?? FINISH_RETRY_MS;
    for (let attempt = 0; ; attempt++) {
      let finished: boolean;
      try {
        finished = await this.o.store.finish(job.id, this.o.owner, result);
      } catch (err) {
        log.warn({ err: (err as Error).message, attempt: attempt + 1 }, 'a finished job\'s answer could not be stored');
        // Checked and waited in one step: a stop() that came during the write is seen here, not lost.
        if (this.stopping) return this.handBack(job);
        if (signal.aborted) return; // cancelled, or the lease went to another process
        if (attempt >= retries.length) {
          throw new ApiError(500, 'result_not_stored', 'The job\'s transcript was made, but the server\'s database could not store it; submit the job again later.');
        }
        await this.pause.wait(retries[attempt]);
        continue;
      }
      if (!finished) return; // cancelled meanwhile, or the lease went to another process
      await this.dropSpool(job);
      this.o.onEnded?.('done');
      log.info({ audioSeconds: job.secondsTotal }, 'job done');
      return;
    }
  }

  /**
   * The rendered answer, or null when the job stopped being this process's
   * (cancelled, or its lease lost). The whole recording goes to the engine in
   * one run, as a synchronous request's would, so the transcript is the one
   * that request would get. The run reports a checkpoint after each 30-s
   * window (each piece, Parakeet), recorded as the job's progress; a run
   * stopped by a restart or a replica's death, or evicted by a request,
   * resumes from the last one recorded and goes on as the uninterrupted run
   * would have (the resume-point patch, cmake/whisper-patches.cmake).
   */
  private async transcribe(job: Job, signal: AbortSignal): Promise<string | null> {
    const form = JSON.parse(job.form) as JobForm;
    const audio = await this.decode(job, signal);
    const checkpoints = new Checkpoints(job, this.o.owner, this.o.store, this.o.logger);
    try {
      for (;;) {
        if (signal.aborted) throw new AbortedError();
        const from = checkpoints.latest;
        try {
          const raw = await this.o.stt.local.transcribe({
            pcm: audio.pcm,
            durationSeconds: audio.pcm.length / RATE,
            signal: AbortSignal.any([signal, checkpoints.lost.signal]),
            owner: job.keyId,
            background: true,
            chunkingStrategy: form.chunkingStrategy,
            options: {
              ...localOptions({ ...form, granularities: new Set(form.granularities) }),
              ...(from && { resumeFrom: from.resume }),
              onCheckpoint: (resume, segments, gated) => checkpoints.add(resume, segments, gated),
            },
          });
          const segments = [...(from?.segments ?? []), ...raw.result.segments];
          const whole = presentLocal({
            ...raw.result,
            text: segments.map((s) => s.text).join(''),
            duration: audio.pcm.length / RATE,
            segments,
            gatedSegments: (from?.gatedSegments ?? 0) + (raw.result.gatedSegments ?? 0),
          }, form.temperature);
          const { body } = render(whole, form.format, { task: form.task, granularities: new Set(form.granularities), temperature: form.temperature ?? 0 });
          return JSON.stringify(body);
        } catch (err) {
          if (checkpoints.lost.signal.aborted && !signal.aborted) return null;
          if (err instanceof StaleCheckpointError) {
            // Made by another model or with other settings (the host changed them meanwhile): from the start.
            this.o.logger.info({ jobId: job.id }, 'the job\'s checkpoint was made by another model or settings: it starts over');
            await checkpoints.clear();
            continue;
          }
          // Evicted (it gave its slot to a request): on from the last checkpoint, once the slot is free again.
          if (!(err instanceof EvictedError) || signal.aborted) throw err;
          await checkpoints.written();
        }
      }
    } finally {
      await checkpoints.written();
    }
  }

  /** The job's recording as 16-kHz samples, decoded in one of the server's decode slots. */
  private async decode(job: Job, signal: AbortSignal) {
    if (!job.spool) throw new Error('the job has no spooled recording');
    try {
      return await decodeSpooled(path.resolve(this.o.spoolDir, job.spool), this.o.decodeSlots, signal, this.o.maxAudioSeconds);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      // Replicas with a spool each: another replica took the upload (docs/api.md#jobs-long-recordings).
      throw new BackendError('recording_missing', 'The job\'s recording is not in this server\'s spool; replicas must share STT_SPOOL_DIR.');
    }
  }

  /** A job whose runs took their process down (out of memory, a crash): failed, so that it takes no more down. */
  private async giveUp(job: Job): Promise<void> {
    this.o.logger.error({ jobId: job.id, starts: job.starts - 1 }, 'a job whose runs never ended is failed');
    const envelope = new ApiError(500, 'job_crashed', `The job was started ${MAX_STARTS} times and its server stopped each time before it ended; it is not tried again.`).toBody();
    if (await this.o.store.fail(job.id, this.o.owner, JSON.stringify(envelope))) {
      await this.dropSpool(job);
      this.o.onEnded?.('failed');
    }
  }

  /** Nobody may fetch the answer of a revoked key's job: it is not worth the cores. */
  private async cancelRevoked(job: Job): Promise<void> {
    if (await this.o.store.cancel(job.id)) await this.dropSpool(job);
    this.o.logger.info({ jobId: job.id, keyId: job.keyId }, 'a job of a revoked key cancelled');
  }

  private async dropSpool(job: Job): Promise<void> {
    if (!job.spool) return;
    await rm(path.resolve(this.o.spoolDir, job.spool), { force: true });
    await this.o.store.forgetSpool(job.id);
  }

  /**
   * Removes jobs that ended more than the retention ago, with any file they
   * left, and spool files no job holds: a job's file whose row is gone (a
   * crash between the two), an upload a killed process left half written.
   */
  private async sweep(): Promise<void> {
    try {
      const files = await this.o.store.sweep(Date.now() - this.o.retentionMs);
      await Promise.all(files.map((f) => rm(path.resolve(this.o.spoolDir, f), { force: true })));
      for (const name of await readdir(this.o.spoolDir)) {
        const file = path.join(this.o.spoolDir, name);
        // An upload in flight, or one renamed for a job whose row is about to be written (here, or on a
        // replica sharing the spool), is younger than this.
        if (!/^(job_|upload-)/.test(name) || Date.now() - (await stat(file)).mtimeMs < ORPHAN_MS) continue;
        const held = name.startsWith('job_') && (await this.o.store.get(name))?.spool === name;
        if (!held) await rm(file, { force: true });
      }
    } catch (err) {
      this.o.logger.warn({ err: (err as Error).message }, 'could not remove old jobs');
    }
  }
}
