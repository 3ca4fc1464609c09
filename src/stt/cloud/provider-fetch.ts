// One HTTP exchange with a provider: a deadline scaled by audio length, one
// retry on a connection failure or a 5xx, and every failure turned into a
// ProviderError that says what happened without the key.
import { deadline } from '../../net/deadline';
import { checkedFetch, refusedAddress } from '../../net/checked-fetch';
import type { AddressRules } from '../../net/remote-url';

export class ProviderError extends Error {
  constructor(
    readonly providerId: string,
    /** The provider's HTTP status, or null when there was no response. */
    readonly status: number | null,
    readonly reason: 'http_status' | 'timeout' | 'connection' | 'bad_response' | 'refused_url',
    /** Safe to show the host in /admin/status: no network detail. */
    message: string,
    /** For the log only (a connection error's code, say). */
    readonly detail?: string,
  ) {
    super(message);
    this.name = 'ProviderError';
  }

  get isAuthFailure(): boolean {
    return this.status === 401 || this.status === 403;
  }
}

export interface ProviderFetchOptions {
  providerId: string;
  timeoutMs: number;
  signal: AbortSignal;
  /** Which addresses the provider's name may resolve to (net/remote-url.ts). */
  addressRules: AddressRules;
}

/** Reads a successful answer; a ProviderError it throws is passed on, anything else is a bad_response. */
export type ReadAnswer = (res: Response) => Promise<unknown>;

/**
 * The most of an answer the server reads: a verbose transcript with words of
 * the longest upload is a few megabytes, and a provider (or whatever answers
 * at its address) must not make the server hold more.
 */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

export const answerTooLarge = (providerId: string, status: number) =>
  new ProviderError(providerId, status, 'bad_response', `answered with more than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB`);

/** The answer's bytes, at most MAX_ANSWER_BYTES of them. */
async function readBounded(res: Response, providerId: string): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > MAX_ANSWER_BYTES) {
    await res.body?.cancel();
    throw answerTooLarge(providerId, res.status);
  }
  const chunks: Uint8Array[] = [];
  let received = 0;
  const reader = res.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.byteLength;
    if (received > MAX_ANSWER_BYTES) {
      await reader.cancel().catch(() => {});
      throw answerTooLarge(providerId, res.status);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** A JSON answer, bounded. */
export const readJson = async (res: Response, providerId: string): Promise<unknown> => JSON.parse((await readBounded(res, providerId)).toString('utf8'));

/** Builds the request afresh for each attempt (a FormData body is single-use). */
export async function providerFetch(
  url: string,
  init: () => RequestInit,
  opts: ProviderFetchOptions,
  read: ReadAnswer = (res) => readJson(res, opts.providerId),
): Promise<unknown> {
  let lastError: ProviderError | null = null;
  for (let attempt = 0; attempt < 2; attempt++) {
    const timeout = deadline(opts.timeoutMs);
    try {
      let res: Response;
      try {
        res = await checkedFetch(url, { ...init(), signal: AbortSignal.any([timeout.signal, opts.signal]), redirect: 'error' }, opts.addressRules);
      } catch (err) {
        if (opts.signal.aborted) throw err;
        const refused = refusedAddress(err);
        if (refused) throw new ProviderError(opts.providerId, null, 'refused_url', `base URL refused: ${refused.message}`);
        if (timeout.signal.aborted) throw new ProviderError(opts.providerId, null, 'timeout', `no answer within ${Math.round(opts.timeoutMs / 1000)} s`);
        const code = (err as Error & { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
        lastError = new ProviderError(opts.providerId, null, 'connection', 'connection failed', code);
        continue;
      }
      if (res.status >= 500) {
        await res.body?.cancel();
        lastError = new ProviderError(opts.providerId, res.status, 'http_status', `answered HTTP ${res.status}`);
        continue;
      }
      if (!res.ok) {
        await res.body?.cancel();
        throw new ProviderError(opts.providerId, res.status, 'http_status', `answered HTTP ${res.status}`);
      }
      try {
        return await read(res);
      } catch (err) {
        if (err instanceof ProviderError || opts.signal.aborted) throw err;
        if (timeout.signal.aborted) throw new ProviderError(opts.providerId, res.status, 'timeout', `no whole answer within ${Math.round(opts.timeoutMs / 1000)} s`);
        throw new ProviderError(opts.providerId, res.status, 'bad_response', 'answered with a body that is not valid JSON');
      }
    } finally {
      timeout.clear(); // the body is read by now, or the attempt is over
    }
  }
  throw lastError!;
}
