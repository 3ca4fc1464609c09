// Runs the jobs of the jobs API (docs/jobs.md), one at a time per process:
// claims the oldest queued job with a lease in the database, decodes its
// spooled recording, transcribes it piece by piece in the local scheduler's
// background lane (behind every request), records each finished piece so a
// restart resumes there, and stores the answer rendered in the job's format.
// The lease is renewed while the job runs; a job whose lease this process
// lost, or that was cancelled, is dropped at the next renewal or piece. On
// shutdown the running job goes back to the queue.
import { readFile, rm } from 'node:fs/promises';
import { decodeAudio } from '../audio/decode-audio';
import { WavError } from '../native';
import { AbortedError, BusyError } from '../domain-errors';
import { ApiError } from '../http/api-error';
import { invalidAudio, knownApiError } from '../http/error-map';
import { render, type OutputTranscription, type ResponseFormat } from '../stt/formats';
import type { Backends } from '../stt/backends';
import type { Granularity, Task } from '../stt/capabilities';
import type { ChunkingStrategy } from '../stt/chunking';
import type { Job, JobStore } from '../store/jobs';
import type { Logger } from '../log';
import { joinPiece, pieceEnds } from './pieces';

const RATE = 16_000;
/** A lease outlives three missed renewals, so a busy event loop does not lose it. */
const LEASE_MS = 30_000;
const RENEW_MS = 10_000;
/** How often an idle runner looks for jobs other replicas queued (its own submissions wake it at once). */
const POLL_MS = 5_000;
/** How long a job the runtime could not take yet (a model loading) waits before it is tried again. */
const BUSY_RETRY_MS = 5_000;
const SWEEP_MS = 60 * 60 * 1000;

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
  /** This process's replica id: the lease owner. */
  owner: string;
  maxAudioSeconds: number;
  retentionMs: number;
  /** SQLite, one process: jobs left running by a process that is gone are queued again at start. */
  alone: boolean;
  logger: Logger;
}

export class JobRunner {
  private stopping = false;
  private loop: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
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
    this.wakeUp?.();
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
      let job: Job | undefined;
      try {
        job = await this.o.store.claim(this.o.owner, LEASE_MS);
      } catch (err) {
        this.o.logger.warn({ err: (err as Error).message }, 'could not claim a job');
      }
      if (job) await this.run(job);
      else await this.idle(POLL_MS);
    }
  }

  private idle(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeUp = done;
    });
  }

  private async run(job: Job): Promise<void> {
    const abort = new AbortController();
    this.running = { id: job.id, abort };
    const renew = setInterval(() => {
      this.o.store.renew(job.id, this.o.owner, LEASE_MS).then(
        (held) => held || abort.abort(),
        (err) => this.o.logger.warn({ jobId: job.id, err: (err as Error).message }, 'could not renew a job\'s lease'),
      );
    }, RENEW_MS);
    const log = this.o.logger.child({ jobId: job.id });
    try {
      const result = await this.transcribe(job, abort.signal);
      if (result === null) return; // cancelled, or the lease went to another process
      if (await this.o.store.finish(job.id, this.o.owner, result)) await this.dropSpool(job);
      log.info({ audioSeconds: job.secondsTotal }, 'job done');
    } catch (err) {
      if (abort.signal.aborted || err instanceof AbortedError) {
        // Shutting down: back to the queue, to resume from its last piece. Cancelled: nothing more to do.
        if (this.stopping) await this.o.store.release(job.id, this.o.owner).catch(() => undefined);
      } else if (err instanceof BusyError) {
        // The runtime cannot take it yet (a model loading): queued again, tried after a pause.
        await this.o.store.release(job.id, this.o.owner).catch(() => undefined);
        await this.idle(BUSY_RETRY_MS);
      } else {
        const api = err instanceof WavError ? invalidAudio(err, log) : knownApiError(err);
        if (!api) log.error({ err: (err as Error).message }, 'job failed');
        const envelope = (api ?? new ApiError(500, 'internal_error', 'The job failed; the server log has the detail.')).toBody();
        if (await this.o.store.fail(job.id, this.o.owner, JSON.stringify(envelope))) await this.dropSpool(job);
      }
    } finally {
      clearInterval(renew);
      this.running = null;
    }
  }

  /** The rendered answer, or null when the job stopped being this process's (cancelled, or its lease lost). */
  private async transcribe(job: Job, signal: AbortSignal): Promise<string | null> {
    const form = JSON.parse(job.form) as JobForm;
    if (!job.spool) throw new Error('the job has no spooled recording');
    const audio = await decodeAudio(await readFile(job.spool), this.o.maxAudioSeconds);
    const partial = job.partial ? (JSON.parse(job.partial) as Partial) : null;
    let transcript = partial?.transcript ?? null;
    let from = 0;
    for (const to of pieceEnds(audio.pcm)) {
      if (partial && to <= partial.samples) {
        from = to;
        continue;
      }
      if (signal.aborted) throw new AbortedError();
      if (to === from) continue; // an empty recording: nothing to hear
      const out = await this.o.stt.transcribe({
        task: form.task,
        pcm: audio.pcm.subarray(from, to),
        durationSeconds: (to - from) / RATE,
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
      transcript = joinPiece(transcript, out.result, from / RATE);
      const saved: Partial = { samples: to, transcript };
      if (!(await this.o.store.progress(job.id, this.o.owner, to / RATE, JSON.stringify(saved)))) return null;
      from = to;
    }
    const whole: OutputTranscription = { ...(transcript ?? { text: '', language: form.language ?? 'en', segments: [] }), duration: audio.pcm.length / RATE };
    const { body } = render(whole, form.format, { task: form.task, granularities: new Set(form.granularities), temperature: form.temperature ?? 0 });
    return JSON.stringify(body);
  }

  private async dropSpool(job: Job): Promise<void> {
    if (!job.spool) return;
    await rm(job.spool, { force: true });
    await this.o.store.forgetSpool(job.id);
  }

  /** Removes jobs that ended more than the retention ago, with any file they left. */
  private async sweep(): Promise<void> {
    try {
      const files = await this.o.store.sweep(Date.now() - this.o.retentionMs);
      await Promise.all(files.map((f) => rm(f, { force: true })));
    } catch (err) {
      this.o.logger.warn({ err: (err as Error).message }, 'could not remove old jobs');
    }
  }
}
