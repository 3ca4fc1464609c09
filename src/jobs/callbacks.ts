// Job callbacks: when a job with a callback_url ends (done or failed), its
// view (the body GET /v1/audio/jobs/{id} answers) is POSTed to the URL,
// signed as Stripe signs its webhooks: `Stt-Signature: t=<unix seconds>,
// v1=<hex HMAC-SHA256 of "<t>.<body>">` with the key's callback secret, so
// a receiver checks both who sent it and when (against replays). Tried again
// after 1 s, 10 s, 1 min, 10 min and 1 h, then given up (the result is still
// fetched with GET); a 2xx ends it. At least once: a receiver deduplicates
// by job id. The pending callbacks are rows in the jobs table, so a restart
// or another replica goes on with them. Every attempt connects under the
// provider-URL rules (net/checked-fetch.ts), resolved anew each time.
import { createHmac } from 'node:crypto';
import { checkedFetch } from '../net/checked-fetch';
import { deadline } from '../net/deadline';
import { checkRemoteUrlWithRules, type AddressRules } from '../net/remote-url';
import type { SecretBox } from '../store/secret-box';
import type { Job, JobStore } from '../store/jobs';
import type { Logger } from '../log';
import type { Metrics } from '../metrics';
import { jobView } from './view';
import { WakeableWait } from './wakeable-wait';

/** The waits before the 2nd to 6th attempts; after the 6th, given up. */
export const RETRY_DELAYS_MS = [1_000, 10_000, 60_000, 600_000, 3_600_000];
const ATTEMPT_TIMEOUT_MS = 10_000;
/** An attempt holds its job this much longer than it may take, so another process does not try it at the same time. */
const HOLD_MARGIN_MS = 5_000;
const POLL_MS = 1_000;

/** The key's callback secret (`whsec_...`): derived from STT_SECRET_KEY, the same on every replica; a new key gets a new one. */
export function callbackSecret(box: SecretBox, keyId: string): string {
  return `whsec_${box.derive(`stt-job-callbacks:${keyId}`).toString('base64url')}`;
}

/** The Stt-Signature header of `body` sent at `unixSeconds`. */
export function signature(secret: string, unixSeconds: number, body: string): string {
  return `t=${unixSeconds},v1=${createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')}`;
}

export interface CallbackSenderOptions {
  store: JobStore;
  box: SecretBox;
  rules: AddressRules;
  userAgent: string;
  logger: Logger;
  metrics?: Metrics;
  /** How long a receiver has to answer an attempt (10 s; shorter in tests). */
  attemptTimeoutMs?: number;
  /** Whether the job's key was revoked (or removed) since it was submitted: its callbacks are given up, unsent. */
  keyRevoked?: (keyId: string) => Promise<boolean>;
}

/** Attempts in flight at once per process; one per key, so a receiver that hangs delays only its own key's. */
const MAX_IN_FLIGHT = 4;

export class CallbackSender {
  private stopping = false;
  private loop: Promise<void> | null = null;
  private readonly pause = new WakeableWait();
  /** Attempts in flight, by key id. */
  private readonly inFlight = new Map<string, { abort: AbortController; done: Promise<void> }>();

  private readonly attemptTimeoutMs: number;

  constructor(private readonly o: CallbackSenderOptions) {
    this.attemptTimeoutMs = o.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS;
  }

  start(): void {
    this.loop = this.work();
  }

  /** The key's callback secret (GET /v1/audio/job-callbacks/secret). */
  secretFor(keyId: string): string {
    return callbackSecret(this.o.box, keyId);
  }

  /** Null when a job may be called back at `url`, otherwise why not (checked again, resolved anew, at every attempt). */
  urlProblem(url: string): string | null {
    return checkRemoteUrlWithRules(url, this.o.rules);
  }

  /** A job ended, or an attempt finished: look now rather than at the next poll. */
  wake(): void {
    this.pause.wake();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const { abort } of this.inFlight.values()) abort.abort();
    this.wake();
    await this.loop;
    await Promise.all([...this.inFlight.values()].map((a) => a.done));
  }

  private async work(): Promise<void> {
    while (!this.stopping) {
      try {
        const claimed = this.inFlight.size < MAX_IN_FLIGHT ? await this.o.store.claimCallback(this.attemptTimeoutMs + HOLD_MARGIN_MS, [...this.inFlight.keys()]) : undefined;
        if (claimed && !this.stopping) this.begin(claimed.job, claimed.hold);
        else if (!claimed) await this.pause.wait(POLL_MS);
      } catch (err) {
        this.o.logger.warn({ err: (err as Error).message }, 'callbacks: a database call failed');
        await this.pause.wait(POLL_MS);
      }
    }
  }

  private begin(job: Job, hold: number): void {
    const abort = new AbortController();
    const done = this.attempt(job, hold, abort.signal)
      .catch((err) => this.o.logger.warn({ jobId: job.id, err: (err as Error).message }, 'callbacks: could not record an attempt'))
      .finally(() => {
        this.inFlight.delete(job.keyId);
        this.wake();
      });
    this.inFlight.set(job.keyId, { abort, done });
  }

  private async attempt(job: Job, hold: number, stop: AbortSignal): Promise<void> {
    const body = JSON.stringify(jobView(job));
    const sentAt = Math.floor(Date.now() / 1000);
    const log = this.o.logger.child({ jobId: job.id, attempt: job.callbackAttempts + 1 });
    let failure: string;
    // deadline(), not AbortSignal.timeout(): inside AbortSignal.any() that one can be collected and never fire (net/deadline.ts).
    // Started before the key is read, so the read counts against the attempt's time and its hold.
    const timeout = deadline(this.attemptTimeoutMs);
    if (await this.o.keyRevoked?.(job.keyId).catch(() => false)) {
      timeout.clear();
      await this.o.store.callbackAttempted(job.id, hold, { delivered: false, retryAt: null });
      this.o.metrics?.jobCallbacks.inc({ outcome: 'given_up' });
      log.info('job callback given up unsent: its key was revoked');
      return;
    }
    try {
      const res = await checkedFetch(job.callbackUrl!, {
        method: 'POST',
        body,
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': this.o.userAgent,
          'Stt-Signature': signature(callbackSecret(this.o.box, job.keyId), sentAt, body),
        },
        redirect: 'manual', // a redirect could lead anywhere the rules were not checked against
        signal: AbortSignal.any([stop, timeout.signal]),
      }, this.o.rules);
      await res.body?.cancel();
      if (res.ok) {
        await this.o.store.callbackAttempted(job.id, hold, { delivered: true });
        this.o.metrics?.jobCallbacks.inc({ outcome: 'delivered' });
        log.info('job callback delivered');
        return;
      }
      failure = `the receiver answered ${res.status}`;
    } catch (err) {
      if (stop.aborted) return; // shutting down: its hold runs out and it is tried again
      failure = (err as Error).message;
    } finally {
      timeout.clear();
    }
    const delay = RETRY_DELAYS_MS[job.callbackAttempts];
    await this.o.store.callbackAttempted(job.id, hold, { delivered: false, retryAt: delay === undefined ? null : Date.now() + delay });
    this.o.metrics?.jobCallbacks.inc({ outcome: delay === undefined ? 'given_up' : 'retry' });
    log.warn({ failure, retryInMs: delay ?? null }, delay === undefined ? 'job callback given up' : 'job callback failed; tried again later');
  }
}
