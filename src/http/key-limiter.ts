// Per-key limits on the audio routes (a stateful limiter, its middleware()
// mounted on each audio route), and the key's usage counted when each
// request ends. The request rate (per minute, a fixed window per key, shared
// by the replicas of a shared database: store/request-windows.ts) is checked
// before the upload is read; the audio budget (seconds per UTC day)
// once the clip's length is known, from the WAV header (or the decoder), with
// the clips admitted and still running counted against it so concurrent
// requests cannot overshoot it together. Over a limit: 429 with Retry-After
// and OpenAI's x-ratelimit-* headers (the audio ones named alike).
import type { Context, Next } from 'koa';
import { ApiError } from './api-error';
import { utcDay, type KeyUsageStore } from '../store/key-usage';
import type { ApiKeyRecord } from '../store/api-keys';
import type { Metrics } from '../metrics';
import type { RequestWindows } from '../store/request-windows';
import { stateOf } from './state';
import { StoreBusyError } from '../store/db';

const DAY_MS = 86_400_000;

/** OpenAI's reset format: "45s", "6m0s", "3h2m10s". */
export function resetIn(ms: number): string {
  const total = Math.max(1, Math.ceil(ms / 1000));
  const [h, m, s] = [Math.floor(total / 3600), Math.floor((total % 3600) / 60), total % 60];
  return h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`;
}

/**
 * A shared database with no connection to spare is busy for every replica
 * alike: 500, not 503, which nginx would retry on each replica and count
 * against it (as for a key check, middleware/auth.ts).
 */
function busyAs500(err: unknown): never {
  if (err instanceof StoreBusyError) throw new ApiError(500, err.code, err.message, null, { 'Retry-After': String(err.retryAfterSeconds) });
  throw err;
}

export class KeyLimiter {
  /** Audio seconds admitted and not yet finished, by key. */
  private readonly running = new Map<string, number>();

  constructor(
    private readonly usage: KeyUsageStore,
    private readonly windows: RequestWindows,
    private readonly metrics?: Pick<Metrics, 'rateLimited'>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Runs after authentication (stateOf(ctx).apiKey) on each audio route. */
  middleware() {
    return async (ctx: Context, next: Next): Promise<void> => {
      const key = stateOf(ctx).apiKey as ApiKeyRecord;
      const day = utcDay(this.now());
      let admitted = 0;
      let failed = false;
      stateOf(ctx).admitAudio = async (seconds: number) => {
        admitted += await this.admitAudio(ctx, key, day, seconds).catch(busyAs500);
      };
      try {
        await this.countRequest(ctx, key).catch(busyAs500);
        await next();
      } catch (err) {
        failed = true;
        throw err;
      } finally {
        if (admitted > 0) this.running.set(key.id, Math.max(0, (this.running.get(key.id) ?? 0) - admitted));
        const transcribed = (stateOf(ctx).transcribedSeconds as number | undefined) ?? 0;
        this.usage.record(key.id, day, { audioSeconds: transcribed, error: failed || stateOf(ctx).errorCode !== undefined });
      }
    };
  }

  /** A live session (src/http/realtime) counts as one request against the key's rate when it opens. */
  async openLive(key: ApiKeyRecord): Promise<void> {
    await this.countRequest(null, key).catch(busyAs500);
  }

  /**
   * Counts a live turn against the key's request rate and reserves its
   * seconds against the key's budget (429 ApiError when either is spent). end() releases them and records the turn like
   * one transcription request: `seconds` transcribed (0 if its job never
   * started), and whether it failed.
   */
  async admitLiveTurn(key: ApiKeyRecord, seconds: number): Promise<{ end(seconds: number, error: boolean): void }> {
    // A turn is a transcription like an upload's, and counts against the key's request rate as one: a session
    // committing 100-ms turns back to back would otherwise run as many jobs as it liked on one request.
    await this.countRequest(null, key).catch(busyAs500);
    const day = utcDay(this.now());
    const admitted = await this.admitAudio(null, key, day, seconds).catch(busyAs500);
    let ended = false;
    return {
      end: (transcribed, error) => {
        if (ended) return;
        ended = true;
        if (admitted > 0) this.running.set(key.id, Math.max(0, (this.running.get(key.id) ?? 0) - admitted));
        this.usage.record(key.id, day, { audioSeconds: transcribed, error });
      },
    };
  }

  /**
   * Whether `seconds` more of live audio would fit the key's budget now;
   * nothing is reserved or recorded. Drafts of a turn (deltas) are made only
   * while the longest turn would: a turn refused at its end must not have
   * been shown for free. A store that cannot answer says no.
   */
  async liveSecondsFit(key: ApiKeyRecord, seconds: number): Promise<boolean> {
    const budget = key.audioSecondsPerDay;
    if (budget === null) return true;
    try {
      return (await this.usage.audioSeconds(key.id, utcDay(this.now()))) + this.reservedSeconds(key) + seconds <= budget;
    } catch {
      return false;
    }
  }

  /**
   * A live turn whose deltas showed `seconds` of its audio and that was then
   * dropped, refused or never transcribed: those seconds are charged, as one
   * request, so showing drafts is never a way around the budget.
   */
  recordShownTurn(key: ApiKeyRecord, seconds: number, error: boolean): void {
    this.usage.record(key.id, utcDay(this.now()), { audioSeconds: seconds, error });
  }

  private async countRequest(ctx: Context | null, key: ApiKeyRecord): Promise<void> {
    const limit = key.requestsPerMinute;
    if (limit === null) return;
    const w = await this.windows.count(key.id, limit, this.now());
    const headers = (remaining: number) => ({
      'x-ratelimit-limit-requests': String(limit),
      'x-ratelimit-remaining-requests': String(remaining),
      'x-ratelimit-reset-requests': resetIn(w.resetMs),
    });
    if (!w.admitted) {
      this.metrics?.rateLimited.inc({ limit: 'requests' });
      throw new ApiError(429, 'rate_limit_exceeded', `This key may send ${limit} audio requests per minute; retry in ${resetIn(w.resetMs)}.`, null,
        { ...headers(0), 'Retry-After': String(Math.ceil(w.resetMs / 1000)) });
    }
    ctx?.set(headers(Math.max(0, limit - w.count)));
  }

  /**
   * The key's seconds reserved by requests still running. Read after the
   * recorded count is awaited, in the same synchronous step as the check and
   * the reservation: a reservation read one await earlier let concurrent
   * requests each see the others' as not yet made, and all pass.
   */
  private reservedSeconds(key: ApiKeyRecord): number {
    return this.running.get(key.id) ?? 0;
  }

  /**
   * Reserves `seconds` of the key's budget for this request; returns what was
   * reserved (0 without a budget). With 0 seconds (a file whose length only
   * decoding tells) it only refuses a key that has nothing left, before the
   * upload is decoded.
   */
  private async admitAudio(ctx: Context | null, key: ApiKeyRecord, day: string, seconds: number): Promise<number> {
    const budget = key.audioSecondsPerDay;
    if (budget === null || seconds < 0) return 0;
    const used = (await this.usage.audioSeconds(key.id, day)) + this.reservedSeconds(key);
    const resetMs = Date.parse(`${day}T00:00:00Z`) + DAY_MS - this.now();
    const headers = (remaining: number) => ({
      'x-ratelimit-limit-audio-seconds': String(budget),
      'x-ratelimit-remaining-audio-seconds': String(Math.max(0, Math.floor(remaining))),
      'x-ratelimit-reset-audio-seconds': resetIn(resetMs),
    });
    if (used + seconds > budget || (seconds === 0 && used >= budget)) {
      this.metrics?.rateLimited.inc({ limit: 'audio_seconds' });
      const left = Math.max(0, Math.floor(budget - used));
      throw new ApiError(429, 'audio_budget_exceeded',
        seconds === 0 || left === 0
          ? `This key may transcribe ${budget} s of audio per day (UTC); none is left.`
          : `This key may transcribe ${budget} s of audio per day (UTC); ${left} s are left and this clip is ${Math.ceil(seconds)} s.`,
        null, { ...headers(budget - used), 'Retry-After': String(Math.ceil(resetMs / 1000)) });
    }
    if (seconds === 0) return 0;
    this.running.set(key.id, (this.running.get(key.id) ?? 0) + seconds);
    ctx?.set(headers(budget - used - seconds));
    return seconds;
  }
}
