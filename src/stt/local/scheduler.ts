// Decides which local transcription runs next and with how many threads.
//
// - A fixed number of slots, each with an equal share of the thread budget,
//   so compute threads never exceed STT_THREADS.
// - Shortest estimated work first, with ageing: every second a job waits
//   lowers its priority key by `agingRate` seconds of audio, so a long job is
//   never starved by a stream of short ones.
// - Long jobs may hold at most slots-1 slots (when there are 2 or more), so a
//   short clip never waits for a long one to finish.
// - A bounded queue: beyond `capacity` waiting jobs, submit() throws QueueFullError.
// - Aborting a queued job removes it; aborting a running one is passed to it.

export class QueueFullError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('local transcription queue is full');
    this.name = 'QueueFullError';
  }
}

export class AbortedError extends Error {
  constructor() {
    super('aborted');
    this.name = 'AbortError';
  }
}

export interface SchedulerOptions {
  threads: number;
  slots: number;
  capacity: number;
  /** Audio seconds above which a job counts as long. */
  longJobSeconds?: number;
  agingRate?: number;
  now?: () => number;
}

interface Entry {
  cost: number;
  long: boolean;
  enqueuedAt: number;
  start: (threads: number) => void;
  fail: (err: Error) => void;
}

export interface SchedulerStats {
  running: number;
  waiting: number;
  capacity: number;
  slots: number;
  threadsPerJob: number;
}

export class Scheduler {
  readonly threadsPerJob: number;
  private readonly waiting: Entry[] = [];
  private running = 0;
  private runningLong = 0;
  private readonly longJobSeconds: number;
  private readonly agingRate: number;
  private readonly now: () => number;
  /** Wall seconds per audio second, smoothed; feeds Retry-After. */
  private secondsPerAudioSecond = 0.5;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: SchedulerOptions) {
    this.threadsPerJob = Math.max(1, Math.floor(options.threads / options.slots));
    this.longJobSeconds = options.longJobSeconds ?? 30;
    this.agingRate = options.agingRate ?? 2;
    this.now = options.now ?? Date.now;
  }

  stats(): SchedulerStats {
    return {
      running: this.running,
      waiting: this.waiting.length,
      capacity: this.options.capacity,
      slots: this.options.slots,
      threadsPerJob: this.threadsPerJob,
    };
  }

  /** Seconds until a new job of this cost would likely start (for Retry-After). */
  estimatedWaitSeconds(): number {
    const queued = this.waiting.reduce((sum, e) => sum + e.cost, 0);
    return (queued * this.secondsPerAudioSecond) / this.options.slots;
  }

  /**
   * Runs `work` when a slot is free. `cost` is the job's audio seconds.
   * Rejects with QueueFullError when the queue is full, AbortedError when
   * `signal` fires while the job waits.
   */
  submit<T>(cost: number, signal: AbortSignal | undefined, work: (threads: number) => Promise<T>): Promise<T> {
    if (signal?.aborted) return Promise.reject(new AbortedError());
    const canStartNow = this.waiting.length === 0 && this.hasSlotFor(cost > this.longJobSeconds);
    if (!canStartNow && this.waiting.length >= this.options.capacity) {
      return Promise.reject(new QueueFullError(this.estimatedWaitSeconds() + cost * this.secondsPerAudioSecond));
    }
    return new Promise<T>((resolve, reject) => {
      const entry: Entry = {
        cost,
        long: cost > this.longJobSeconds,
        enqueuedAt: this.now(),
        start: (threads) => {
          signal?.removeEventListener('abort', onAbort);
          const started = this.now();
          work(threads)
            .then(resolve, reject)
            .finally(() => this.finish(entry, started));
        },
        fail: reject,
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(entry);
        if (i >= 0) {
          this.waiting.splice(i, 1);
          reject(new AbortedError());
          this.notifyIfIdle();
        }
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
      this.dispatch();
    });
  }

  /** Resolves when nothing runs or waits. */
  idle(): Promise<void> {
    if (this.running === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private hasSlotFor(long: boolean): boolean {
    if (this.running >= this.options.slots) return false;
    const longLimit = this.options.slots >= 2 ? this.options.slots - 1 : 1;
    return !long || this.runningLong < longLimit;
  }

  private dispatch(): void {
    while (this.waiting.length > 0 && this.running < this.options.slots) {
      const now = this.now();
      let best = -1;
      let bestKey = Infinity;
      this.waiting.forEach((e, i) => {
        if (!this.hasSlotFor(e.long)) return;
        const key = e.cost - (this.agingRate * (now - e.enqueuedAt)) / 1000;
        if (key < bestKey) {
          bestKey = key;
          best = i;
        }
      });
      if (best < 0) return;
      const [entry] = this.waiting.splice(best, 1);
      this.running++;
      if (entry.long) this.runningLong++;
      entry.start(this.threadsPerJob);
    }
  }

  private finish(entry: Entry, startedAt: number): void {
    this.running--;
    if (entry.long) this.runningLong--;
    if (entry.cost > 0) {
      const observed = (this.now() - startedAt) / 1000 / entry.cost;
      this.secondsPerAudioSecond = 0.8 * this.secondsPerAudioSecond + 0.2 * observed;
    }
    this.dispatch();
    this.notifyIfIdle();
  }

  private notifyIfIdle(): void {
    if (this.running === 0 && this.waiting.length === 0) {
      for (const w of this.idleWaiters.splice(0)) w();
    }
  }
}
