// Runs the jobs of the jobs API (docs/jobs.md), one at a time per process:
// claims the oldest queued job with a lease in the database, decodes its
// spooled recording, transcribes it piece by piece in the local scheduler's
// background lane (behind every request), records each finished piece so a
// restart resumes there, and stores the answer rendered in the job's format.
// The lease is renewed while the job runs; a job whose lease this process
// lost, or that was cancelled, is dropped at the next renewal or piece. On
// shutdown the running job goes back to the queue.
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { decodeAudio } from '../audio/decode-audio';
import { WavError } from '../native';
import { AbortedError, BackendError, BusyError } from '../domain-errors';
import { ApiError } from '../http/api-error';
import { invalidAudio, knownApiError } from '../http/error-map';
import { render, type OutputTranscription, type ResponseFormat } from '../stt/formats';
import type { Backends } from '../stt/backends';
import { EvictedError } from '../stt/local/scheduler';
import type { Semaphore } from '../stt/semaphore';
import type { Granularity, Task } from '../stt/capabilities';
import type { ChunkingStrategy } from '../stt/chunking';
import type { Job, JobStore } from '../store/jobs';
import type { Logger } from '../log';
import { firstPieceEnd, joinPiece, PIECE_SECONDS } from './pieces';
import { WakeableWait } from './wakeable-wait';

const RATE = 16_000;
/** How often an idle runner looks for jobs other replicas queued (its own submissions wake it at once). */
const POLL_MS = 5_000;
/** How long a job the runtime could not take yet (a model loading) waits before it is tried again. */
const BUSY_RETRY_MS = 5_000;
const SWEEP_MS = 60 * 60 * 1000;
/** The smallest piece an evicted piece is cut down to. */
const MIN_PIECE_SECONDS = 30;
/** A spool file no job holds, untouched this long, belongs to no request either. */
const ORPHAN_MS = 6 * 60 * 60 * 1000;

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

/** What a job's `partial` column holds: how far it got (in samples of 16-kHz audio), and the transcript so far. */
interface Partial {
  samples: number;
  transcript: OutputTranscription;
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

  private async work(): Promise<void> {
    while (!this.stopping) {
      try {
        const job = await this.o.store.claim(this.o.owner, this.o.leaseMs);
        // stop() came while the claim was on its way: the job goes straight back.
        if (job && this.stopping) await this.o.store.release(job.id, this.o.owner);
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
      if (!(await this.o.store.finish(job.id, this.o.owner, result))) return;
      await this.dropSpool(job);
      this.o.onEnded?.('done');
      log.info({ audioSeconds: job.secondsTotal }, 'job done');
    } catch (err) {
      if (abort.signal.aborted || err instanceof AbortedError) {
        // Shutting down: back to the queue, to resume from its last piece. Cancelled: nothing more to do.
        if (this.stopping) await this.o.store.release(job.id, this.o.owner).catch(() => undefined);
      } else if (err instanceof BusyError) {
        // The runtime cannot take it yet (a model loading): queued again, tried after a pause.
        await this.o.store.release(job.id, this.o.owner).catch(() => undefined);
        await this.pause.wait(BUSY_RETRY_MS);
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

  /** The rendered answer, or null when the job stopped being this process's (cancelled, or its lease lost). */
  private async transcribe(job: Job, signal: AbortSignal): Promise<string | null> {
    const form = JSON.parse(job.form) as JobForm;
    const audio = await this.decode(job, signal);
    const partial = job.partial ? (JSON.parse(job.partial) as Partial) : null;
    let transcript = partial?.transcript ?? null;
    // A resumed job is cut anew from where it stopped, so no piece is heard twice whatever the cuts were before.
    let from = partial?.samples ?? 0;
    let pieceSeconds = PIECE_SECONDS;
    while (from < audio.pcm.length) {
      if (signal.aborted) throw new AbortedError();
      const to = from + firstPieceEnd(audio.pcm.subarray(from), pieceSeconds);
      let out: OutputTranscription;
      try {
        out = await this.transcribePiece(job, form, audio.pcm.subarray(from, to), signal);
      } catch (err) {
        if (!(err instanceof EvictedError) || signal.aborted) throw err;
        // It gave its slot to a request and its work was lost: a smaller piece fits better between requests.
        pieceSeconds = Math.max(MIN_PIECE_SECONDS, pieceSeconds / 2);
        continue;
      }
      pieceSeconds = Math.min(PIECE_SECONDS, pieceSeconds * 2);
      transcript = joinPiece(transcript, out, from / RATE);
      const saved: Partial = { samples: to, transcript };
      if (!(await this.o.store.progress(job.id, this.o.owner, to / RATE, JSON.stringify(saved)))) return null;
      from = to;
    }
    const whole: OutputTranscription = { ...(transcript ?? { text: '', language: form.language ?? 'en', segments: [] }), duration: audio.pcm.length / RATE };
    const { body } = render(whole, form.format, { task: form.task, granularities: new Set(form.granularities), temperature: form.temperature ?? 0 });
    return JSON.stringify(body);
  }

  /** The job's recording as 16-kHz samples, decoded in one of the server's decode slots. */
  private async decode(job: Job, signal: AbortSignal) {
    if (!job.spool) throw new Error('the job has no spooled recording');
    let bytes: Buffer;
    try {
      bytes = await readFile(path.resolve(this.o.spoolDir, job.spool));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      // Replicas with a spool each: another replica took the upload (docs/api.md#jobs-long-recordings).
      throw new BackendError('recording_missing', 'The job\'s recording is not in this server\'s spool; replicas must share STT_SPOOL_DIR.');
    }
    await this.o.decodeSlots.acquire(signal);
    try {
      return await decodeAudio(bytes, this.o.maxAudioSeconds);
    } finally {
      this.o.decodeSlots.release();
    }
  }

  /** One piece, in the background lane (EvictedError when it gave its slot to a request). */
  private async transcribePiece(job: Job, form: JobForm, pcm: Float32Array, signal: AbortSignal): Promise<OutputTranscription> {
    const out = await this.o.stt.transcribe({
      task: form.task,
      pcm,
      durationSeconds: pcm.length / RATE,
      signal,
      wav: null,
      filename: 'audio.wav',
      format: form.format,
      language: form.language,
      prompt: form.prompt,
      temperature: form.temperature,
      granularities: new Set(form.granularities),
      chunkingStrategy: form.chunkingStrategy,
      owner: job.keyId,
      cloud: null,
      background: true,
    });
    return out.result;
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
