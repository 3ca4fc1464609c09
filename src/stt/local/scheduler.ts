// Decides which local transcription computes now and with how many threads.
//
// - `slots` jobs compute at once, each with an equal share of the thread
//   budget, so compute threads never exceed STT_THREADS. One slot with every
//   thread is the default: on small CPU boxes a job with all threads beats two
//   jobs with half each (measured in benchmarks/).
// - Shortest estimated work first, with ageing: every second a job waits
//   lowers its priority key by `agingRate` seconds of audio, so a long job is
//   never starved by a stream of short ones.
// - Preemption without lost work: when a short job waits and a long one holds
//   the slot with a worse key, the long job is paused after the ggml graph
//   node in progress (milliseconds; at its next window or token boundary where
//   the graph hooks are not linked; see JobControl in src/native) and resumed
//   later, so a 5-s clip never waits for a 2-minute one. Results do not change.
//   At most `maxPaused` jobs sit paused (each holds a model state and a libuv
//   worker thread while it waits), and a job is never paused before its native
//   work has begun: paused then, it would take a pool thread only to wait.
// - Fair between API keys (fair queuing): a job's priority key also counts
//   the audio of its owner's jobs finished since the owner last had nothing
//   here, and of its owner's waiting jobs ahead of it, so one key's burst
//   queues behind itself while keys with work take turns, preemption
//   included. An owner arriving starts level with the least-served owner
//   present, so a newcomer can neither starve the others nor be starved. For
//   one key alone the order is the same as without it (a constant, and prefix
//   sums over that order).
// - `order: 'arrival'` turns both off: jobs start in arrival order and are
//   never paused (what a plain FIFO server does; the benchmark's control).
// - A bounded queue: beyond `capacity` waiting jobs, submit() throws QueueFullError.
//   One owner may hold at most `ownerCapacity` of those places (OwnerShareFullError),
//   so a key that floods the queue is refused while the others still find room:
//   fair ordering alone decides who goes first, not who gets in.
// - Aborting a queued job removes it; aborting a running or paused one is passed to it.
// - A background lane (submit's `background`, the jobs API's runs): a
//   background job starts only on a slot no other job waits for or sits
//   paused for, in arrival order, and is paused for any other job that
//   arrives. It takes no place in the bounded queue, no ageing and no
//   fair-queuing tag, and stays out of the wait estimate, so a queued 4-hour
//   recording neither fills the queue, nor lengthens Retry-After, nor sends
//   short requests to the cloud. Where a pause is not to be had (the pause
//   budget is spent, or order 'arrival' never pauses) the background job is
//   evicted instead: aborted, and rejected with EvictedError, for its owner
//   to submit again. It never holds a request up longer than the moment its
//   native call takes to return.

import { AbortedError, BusyError } from '../../domain-errors';

/** How soon a preemption waiting for its victim's native work to begin looks again. */
const RETRY_MS = 5;

export class QueueFullError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('local transcription queue is full');
    this.name = 'QueueFullError';
  }
}


/** A background job was stopped to make room for a request (see the note at the top): submit it again. */
export class EvictedError extends BusyError {
  constructor() {
    super('evicted', 'The background job gave its slot to a request; submit it again.', 0);
  }
}

/** One owner's share of the queue is taken; the queue may still have room for others. */
export class OwnerShareFullError extends Error {
  constructor(readonly retryAfterSeconds: number, readonly share: number) {
    super(`this owner already has ${share} jobs waiting`);
    this.name = 'OwnerShareFullError';
  }
}

export type SchedulingOrder = 'shortest-first' | 'arrival';

export interface SchedulerOptions {
  threads: number;
  /** Default shortest-first (with ageing and preemption). */
  order?: SchedulingOrder;
  slots: number;
  capacity: number;
  /** Waiting jobs one owner may hold at most; defaults to `capacity` (no share). */
  ownerCapacity?: number;
  /** Audio seconds above which a job counts as long (and may be paused for shorter ones). */
  longJobSeconds?: number;
  agingRate?: number;
  /** Paused jobs at most; defaults to `slots`. */
  maxPaused?: number;
  now?: () => number;
  /**
   * Threads a job's decoder starts with, given the slot's share (its encoder
   * always has the share): by default the share; the server passes one that
   * follows the cores other processes leave free (free-cores.ts, STT_FOLLOW_FREE_CORES).
   */
  decoderThreadsFor?: (share: number) => number;
}

/** What a job hands the scheduler so it can be paused at a safe point. */
export interface Pausable {
  pause(): void;
  resume(): void;
  /**
   * Whether the job's native work has begun on a pool thread. A job paused
   * before that would take a pool thread only to wait in it, and enough of
   * those starve the threads the jobs it was paused for need. Absent: started.
   */
  started?(): boolean;
  /** Stops the job for good (background jobs only: see EvictedError). Absent: a background job is never evicted. */
  evict?(): void;
}

export interface JobStart {
  threads: number;
  /** Threads for the decoder's graphs (Whisper); at most `threads`. */
  decoderThreads: number;
  /** Registers the job's pause handle; a job that never attaches is never paused. */
  attach(pausable: Pausable): void;
}

interface Entry {
  cost: number;
  /** Who sent it (an API key id): jobs of other owners are served fairly against it. */
  owner?: string;
  /** Arrival order, for ties. */
  seq: number;
  /** Rejects a waiting job with AbortedError. */
  abort: () => void;
  long: boolean;
  enqueuedAt: number;
  start: (job: JobStart) => void;
  pausable?: Pausable;
  pausedAt?: number;
  pausedMs: number;
  /** Whether its time feeds the seconds-per-audio-second estimate (drafts, cheaper per second, do not). */
  sampled: boolean;
  /** In the background lane (see the note at the top). */
  background: boolean;
  /** Evicted: its native call is returning; it holds no place in the pause budget. */
  evicted?: boolean;
}

export interface SubmitOptions {
  /** Who sent it (an API key id): served fairly against other owners, and held to its share of the queue. */
  owner?: string;
  /** false keeps the job's time out of the wait estimates (a draft, decoded more cheaply per second than other jobs). */
  sampled?: boolean;
  /** The background lane: see the note at the top. */
  background?: boolean;
}

export interface SchedulerStats {
  /** Jobs started and not finished, paused ones included. */
  running: number;
  paused: number;
  waiting: number;
  /** Pauses of a running job for a shorter one since start (a count, so a test or a scrape cannot miss one). */
  preemptions: number;
  /** Background jobs here, waiting, running or paused (counted in none of the above but running and paused). */
  background: number;
  capacity: number;
  ownerCapacity: number;
  slots: number;
  threadsPerJob: number;
}

export class Scheduler {
  readonly threadsPerJob: number;
  private readonly waiting: Entry[] = [];
  /** Background jobs not yet started, in arrival order. */
  private readonly backlog: Entry[] = [];
  private preemptions = 0;
  private arrivals = 0;
  /** Audio seconds of each present owner's jobs finished since it arrived (its fair-queuing tag). */
  private readonly served = new Map<string, number>();
  private readonly active = new Set<Entry>();
  private readonly paused: Entry[] = [];
  private readonly longJobSeconds: number;
  private readonly agingRate: number;
  private readonly maxPaused: number;
  private readonly ownerCapacity: number;
  private readonly now: () => number;
  /** Wall seconds per audio second while computing, smoothed; feeds Retry-After. */
  private secondsPerAudioSecond = 0.5;
  private idleWaiters: (() => void)[] = [];
  /** Set while a preemption waits for its victim's native work to begin. */
  private retry: NodeJS.Timeout | undefined;

  constructor(private readonly options: SchedulerOptions) {
    this.threadsPerJob = Math.max(1, Math.floor(options.threads / options.slots));
    this.longJobSeconds = options.longJobSeconds ?? 30;
    this.agingRate = options.agingRate ?? 2;
    this.maxPaused = options.maxPaused ?? options.slots;
    this.ownerCapacity = Math.min(options.ownerCapacity ?? options.capacity, options.capacity);
    this.now = options.now ?? Date.now;
  }

  stats(): SchedulerStats {
    return {
      running: this.active.size + this.paused.length,
      paused: this.paused.length,
      waiting: this.waiting.length,
      preemptions: this.preemptions,
      background: this.backlog.length + [...this.active, ...this.paused].filter((e) => e.background).length,
      capacity: this.options.capacity,
      ownerCapacity: this.ownerCapacity,
      slots: this.options.slots,
      threadsPerJob: this.threadsPerJob,
    };
  }

  /** Whether submit() would refuse a job now: callers check before they spend memory and time on one. */
  isFull(): boolean {
    return !this.canStartNow() && this.waiting.length >= this.options.capacity;
  }

  /** Whether submit() would refuse `owner` a job now because its share of the queue is taken. */
  isOwnerFull(owner: string | undefined): boolean {
    // A share as large as the queue is no share: the full queue answers for it (a queue of 0 or 1 has none).
    if (owner === undefined || this.ownerCapacity >= this.options.capacity || this.canStartNow()) return false;
    let mine = 0;
    for (const e of this.waiting) if (e.owner === owner) mine++;
    return mine >= this.ownerCapacity;
  }

  private canStartNow(): boolean {
    return this.waiting.length === 0 && this.foregroundActive() < this.options.slots;
  }

  private foregroundActive(): number {
    let n = 0;
    for (const e of this.active) if (!e.background) n++;
    return n;
  }

  /** Whether a job submitted now would start at once and delay nobody but background jobs (drafts run only then). */
  hasForegroundRoom(): boolean {
    return this.waiting.length === 0 && !this.paused.some((e) => !e.background) && this.foregroundActive() < this.options.slots;
  }

  /** Seconds until a new job would likely start (for Retry-After); background jobs give way, so they do not count. */
  estimatedWaitSeconds(): number {
    const queued = [...this.waiting, ...this.paused].filter((e) => !e.background).reduce((sum, e) => sum + e.cost, 0);
    return (queued * this.secondsPerAudioSecond) / this.options.slots;
  }

  /**
   * Runs `work` when a slot is free. `cost` is the job's audio seconds.
   * Rejects with OwnerShareFullError when the owner holds its share of the
   * queue, QueueFullError when the queue is full (neither in the background
   * lane), AbortedError when `signal` fires while the job waits.
   */
  submit<T>(cost: number, signal: AbortSignal | undefined, work: (job: JobStart) => Promise<T>, options: SubmitOptions = {}): Promise<T> {
    const { sampled = true, background = false } = options;
    // Background jobs are served in arrival order, outside the fair queuing between owners.
    const owner = background ? undefined : options.owner;
    if (signal?.aborted) return Promise.reject(new AbortedError());
    // The owner's share first: a key over it is refused as itself (429), never as a full server (a 503
    // a proxy would retry on every replica and count against each).
    if (!background && this.isOwnerFull(owner)) {
      return Promise.reject(new OwnerShareFullError(this.estimatedWaitSeconds() + cost * this.secondsPerAudioSecond, this.ownerCapacity));
    }
    if (!background && this.isFull()) {
      return Promise.reject(new QueueFullError(this.estimatedWaitSeconds() + cost * this.secondsPerAudioSecond));
    }
    const queue = background ? this.backlog : this.waiting;
    return new Promise<T>((resolve, reject) => {
      const entry: Entry = {
        abort: () => {
          signal?.removeEventListener('abort', onAbort);
          reject(new AbortedError());
        },
        cost,
        owner,
        seq: this.arrivals++,
        long: !background && cost > this.longJobSeconds,
        enqueuedAt: this.now(),
        pausedMs: 0,
        sampled,
        background,
        start: (job) => {
          signal?.removeEventListener('abort', onAbort);
          const started = this.now();
          work(job)
            .then(resolve, (err) => reject(entry.evicted ? new EvictedError() : err))
            .finally(() => this.finish(entry, started));
        },
      };
      const onAbort = () => {
        const i = queue.indexOf(entry);
        if (i >= 0) {
          queue.splice(i, 1);
          this.leave(owner);
          reject(new AbortedError());
          this.dispatch(); // a background job may take the slot this one waited for
          this.notifyIfIdle();
        }
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.arrive(owner);
      queue.push(entry);
      this.dispatch();
    });
  }

  /** Rejects every waiting job with AbortedError (shutdown); running and paused ones are aborted through their controls. */
  abortWaiting(): void {
    for (const entry of [...this.waiting.splice(0), ...this.backlog.splice(0)]) {
      this.leave(entry.owner);
      entry.abort();
    }
    this.notifyIfIdle();
  }

  /** Resolves when nothing runs, waits or sits paused. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private key(e: Entry, now: number): number {
    if (this.options.order === 'arrival') return e.enqueuedAt;
    return e.cost - (this.agingRate * (now - e.enqueuedAt)) / 1000;
  }

  /** Whether `a` comes before `b` in their owner's own order. */
  private ahead(a: Entry, b: Entry, now: number): boolean {
    const ka = this.key(a, now);
    const kb = this.key(b, now);
    return ka < kb || (ka === kb && a.seq < b.seq);
  }

  private inScheduler(owner: string): boolean {
    const mine = (e: Entry) => e.owner === owner;
    return this.waiting.some(mine) || this.paused.some(mine) || [...this.active].some(mine);
  }

  /** An owner with nothing here starts level with the least-served owner present. */
  private arrive(owner: string | undefined): void {
    if (owner === undefined || this.inScheduler(owner)) return;
    this.served.set(owner, this.served.size ? Math.min(...this.served.values()) : 0);
  }

  /** Forgets an owner once it has nothing here. */
  private leave(owner: string | undefined): void {
    if (owner !== undefined && !this.inScheduler(owner)) this.served.delete(owner);
  }

  /**
   * key() plus the audio of the owner's jobs finished since it arrived, plus,
   * for a waiting job, its owner's waiting jobs ahead of it (see the fairness
   * note at the top). Every job of one owner carries the same first term, so
   * within an owner (and for one key alone) the order is key()'s.
   */
  private fairKey(e: Entry, now: number): number {
    if (e.owner === undefined || this.options.order === 'arrival') return this.key(e, now);
    let ahead = this.served.get(e.owner) ?? 0;
    if (this.waiting.includes(e)) for (const o of this.waiting) if (o.owner === e.owner && o !== e && this.ahead(o, e, now)) ahead += o.cost;
    return this.key(e, now) + ahead;
  }

  /** The next job for a free slot: the best fair key, ties to the earlier arrival. */
  private fairest(entries: Entry[], now: number): Entry | undefined {
    let best: Entry | undefined;
    let bestKey = Infinity;
    for (const e of entries) {
      const k = this.fairKey(e, now);
      if (!best || k < bestKey || (k === bestKey && e.seq < best.seq)) [best, bestKey] = [e, k];
    }
    return best;
  }

  private dispatch(): void {
    const now = this.now();
    // A job resumed here is not paused again in the same pass (it was just chosen over the others).
    const resumed = new Set<Entry>();
    for (;;) {
      // Fill free slots with the best of what is paused or waiting.
      while (this.active.size < this.options.slots) {
        const next = this.fairest([...this.paused.filter((e) => !e.background), ...this.waiting], now);
        if (!next) break;
        if (this.paused.includes(next)) {
          this.resume(next, now);
          resumed.add(next);
        } else this.startEntry(next);
      }
      if (this.waiting.length === 0) {
        // Nothing waits: the slots left go to the background lane, a paused background job first.
        this.fillWithBackground(now);
        return;
      }
      // A job waits for a slot a background job holds: that one gives it up first.
      if (this.pauseBackground(now)) continue;
      // The job a long one was paused for starts in its slot now: left to the
      // fill loop, an aged long job waiting could take the slot instead.
      const candidate = this.fairest(this.waiting.filter((e) => !e.long), now);
      if (!candidate || !this.preemptFor(candidate, now, resumed)) return;
      this.startEntry(candidate);
    }
  }

  /** Starts or resumes background jobs on free slots, only while no other job sits paused. */
  private fillWithBackground(now: number): void {
    while (this.active.size < this.options.slots && !this.paused.some((e) => !e.background)) {
      const paused = this.paused.find((e) => e.background);
      if (paused) this.resume(paused, now);
      else if (this.backlog.length) this.startEntry(this.backlog[0]);
      else return;
    }
  }

  /**
   * Makes a running background job give its slot to a waiting request:
   * paused where the pause budget allows, otherwise evicted (the request then
   * starts once the native call has returned). True when the slot is free now.
   */
  private pauseBackground(now: number): boolean {
    const running = [...this.active].filter((e) => e.background && e.pausable && !e.evicted);
    if (this.options.order === 'arrival' || this.pausedCount() >= this.maxPaused) {
      const victim = running.find((e) => e.pausable!.evict);
      if (victim) this.evict(victim);
      return false;
    }
    const victim = running.find((e) => !e.pausable!.started || e.pausable!.started());
    if (!victim) {
      if (running.length) this.retry ??= setTimeout(() => ((this.retry = undefined), this.dispatch()), RETRY_MS).unref();
      return false;
    }
    this.active.delete(victim);
    victim.pausedAt = now;
    this.paused.push(victim);
    victim.pausable!.pause();
    return true;
  }

  /** Paused jobs that hold a place in the pause budget (an evicted one is on its way out). */
  private pausedCount(): number {
    return this.paused.filter((e) => !e.evicted).length;
  }

  private evict(entry: Entry): void {
    entry.evicted = true;
    entry.pausable!.evict!();
  }

  /** Frees a place in the pause budget held by a paused background job; false when none holds one. */
  private evictPausedBackground(): boolean {
    const victim = this.paused.find((e) => e.background && !e.evicted && e.pausable?.evict);
    if (victim) this.evict(victim);
    return victim !== undefined;
  }

  /**
   * Pauses the worst long job computing if `candidate` (a waiting short job)
   * beats it by fair keys: for one key alone, that is plain shortest-first.
   */
  private preemptFor(candidate: Entry, now: number, resumed: ReadonlySet<Entry>): boolean {
    if (this.options.order === 'arrival') return false;
    let victim: Entry | undefined;
    let notYetStarted = false;
    for (const e of this.active) {
      if (!e.long || e.background || !e.pausable || resumed.has(e) || this.fairKey(candidate, now) >= this.fairKey(e, now)) continue;
      if (e.pausable.started && !e.pausable.started()) {
        notYetStarted = true;
        continue;
      }
      if (!victim || this.key(e, now) > this.key(victim, now)) victim = e;
    }
    if (!victim) {
      // Its native work begins within moments (the pool has room by the config's rule): look again then.
      if (notYetStarted) this.retry ??= setTimeout(() => ((this.retry = undefined), this.dispatch()), RETRY_MS).unref();
      return false;
    }
    // A paused background job gives its place in the budget up to a request.
    if (this.pausedCount() >= this.maxPaused && !this.evictPausedBackground()) return false;
    this.active.delete(victim);
    victim.pausedAt = now;
    this.paused.push(victim);
    this.preemptions++;
    victim.pausable!.pause();
    return true;
  }

  private resume(entry: Entry, now: number): void {
    this.paused.splice(this.paused.indexOf(entry), 1);
    entry.pausedMs += now - (entry.pausedAt ?? now);
    entry.pausedAt = undefined;
    this.active.add(entry);
    entry.pausable!.resume();
  }

  private startEntry(entry: Entry): void {
    const queue = entry.background ? this.backlog : this.waiting;
    queue.splice(queue.indexOf(entry), 1);
    this.active.add(entry);
    const threads = this.threadsPerJob;
    const decoderThreads = this.options.decoderThreadsFor ? this.options.decoderThreadsFor(threads) : threads;
    entry.start({ threads, decoderThreads, attach: (p) => (entry.pausable = p) });
  }

  private finish(entry: Entry, startedAt: number): void {
    // A paused job finishes while paused only when it was aborted (its
    // control opens the gate and the native call returns): drop it from the list.
    const i = this.paused.indexOf(entry);
    if (i >= 0) this.paused.splice(i, 1);
    this.active.delete(entry);
    if (entry.owner !== undefined) this.served.set(entry.owner, (this.served.get(entry.owner) ?? 0) + entry.cost);
    this.leave(entry.owner);
    const computedMs = this.now() - startedAt - entry.pausedMs;
    if (entry.cost > 0 && i < 0 && entry.sampled && !entry.evicted) {
      this.secondsPerAudioSecond = 0.8 * this.secondsPerAudioSecond + 0.2 * (computedMs / 1000 / entry.cost);
    }
    this.dispatch();
    this.notifyIfIdle();
  }

  private isIdle(): boolean {
    return this.active.size === 0 && this.paused.length === 0 && this.waiting.length === 0 && this.backlog.length === 0;
  }

  private notifyIfIdle(): void {
    if (this.isIdle()) for (const w of this.idleWaiters.splice(0)) w();
  }
}
