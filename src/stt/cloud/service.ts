// Cloud routing: resolves the provider record and key, calls its adapter,
// and remembers the last failure per provider for /admin/status.
import type { Logger } from '../../log';
import { UndecryptableKeyError, type ProviderRecord, type ProviderStore } from '../../store/providers';
import type { OutputTranscription } from '../formats';
import type { AdapterCall, CloudRequest } from './adapter';
import { honours, PROVIDER_CAPABILITIES, type Capabilities } from '../capabilities';
import { deepgramTranscribe } from './deepgram-adapter';
import { openaiTranscribe } from './openai-adapter';
import { ProviderError } from './provider-fetch';
import { Semaphore } from '../semaphore';
import { AbortedError, BackendError, BusyError, cannotTranslate } from '../../domain-errors';
import type { Metrics } from '../../metrics';

export interface ProviderFailure {
  status: number | null;
  reason: string;
  message: string;
  at: string;
}

const ADAPTERS: Record<ProviderRecord['kind'], (call: AdapterCall) => Promise<OutputTranscription>> = {
  openai: openaiTranscribe,
  deepgram: deepgramTranscribe,
};

export interface CloudLimits {
  timeoutBaseMs: number;
  timeoutPerAudioSecondMs: number;
  /** Provider calls in flight at once; each holds its upload until the provider answers. */
  concurrency: number;
  allowInsecureLoopback: boolean;
  /** STT_ALLOW_PRIVATE_ADDRESSES: providers on loopback or private networks. */
  allowPrivate?: boolean;
}

/** What a client is told about a provider failure: no connection detail (a port-scan oracle). */
function clientMessage(providerName: string, err: ProviderError): string {
  if (err.isAuthFailure) return `The cloud provider "${providerName}" rejected the server's credentials.`;
  if (err.reason === 'http_status') return `The cloud provider "${providerName}" failed (HTTP ${err.status}).`;
  if (err.reason === 'timeout') return `The cloud provider "${providerName}" did not answer in time.`;
  if (err.reason === 'bad_response') return `The cloud provider "${providerName}" sent an answer this server cannot use.`;
  return `The cloud provider "${providerName}" could not be reached.`;
}

export function aliasOf(provider: ProviderRecord, modelId: string): string {
  return provider.models.find((m) => m.id === modelId)?.alias || `${provider.id}/${modelId}`;
}

const tooBusy = () => new BusyError('queue_full', 'Too many cloud transcriptions are in flight; retry shortly.', 1);

export class CloudService {
  readonly failures = new Map<string, ProviderFailure>();

  /** The provider's lastError in /admin/status, until its next success. */
  private recordFailure(providerId: string, status: ProviderFailure['status'], reason: string, message: string): void {
    this.failures.set(providerId, { status, reason, message, at: new Date().toISOString() });
  }
  private readonly calls: Semaphore;

  constructor(
    private readonly providers: ProviderStore,
    private readonly limits: CloudLimits,
    private readonly logger: Logger,
    private readonly metrics?: Pick<Metrics, 'providerCalls' | 'providerErrors'>,
  ) {
    this.calls = new Semaphore(limits.concurrency);
  }

  /** 503 queue_full when every call slot is taken: checked before the upload is decoded. */
  refuseIfBusy(): void {
    if (this.calls.full) throw tooBusy();
  }

  async aliasFor(providerId: string, modelId: string): Promise<string> {
    const p = await this.providers.get(providerId);
    return p ? aliasOf(p, modelId) : `${providerId}/${modelId}`;
  }

  /** Enabled, with a key that opens. */
  async usable(providerId: string): Promise<boolean> {
    const p = await this.providers.get(providerId);
    return !!p?.enabled && (await this.providers.apiKey(providerId).catch(() => null)) !== null;
  }

  /** Usable, and a call slot free this instant: worth sending a request to. */
  async canServe(providerId: string): Promise<boolean> {
    return !this.calls.full && (await this.usable(providerId));
  }

  async capabilities(providerId: string): Promise<Capabilities> {
    const p = await this.providers.get(providerId);
    return PROVIDER_CAPABILITIES[p?.kind ?? 'openai'];
  }

  async transcribe(
    providerId: string,
    modelId: string,
    request: CloudRequest & { durationSeconds: number; signal: AbortSignal; onStart?: () => void },
  ): Promise<{ result: OutputTranscription; runtime: string }> {
    if (!this.calls.tryAcquire()) throw tooBusy();
    try {
      return await this.call(providerId, modelId, request);
    } finally {
      this.calls.release();
    }
  }

  private async call(
    providerId: string,
    modelId: string,
    request: CloudRequest & { durationSeconds: number; signal: AbortSignal; onStart?: () => void },
  ): Promise<{ result: OutputTranscription; runtime: string }> {
    // One read: the key goes to the base URL of the row it was opened from.
    const found = await this.providers.withKey(providerId).catch((err) => {
      if (!(err instanceof UndecryptableKeyError)) throw err;
      // Shown in /admin/status: the host changed the secret, the key must be entered again.
      this.recordFailure(providerId, null, 'key_undecryptable', err.message);
      this.logger.error({ provider: providerId }, err.message);
      throw new BackendError('provider_unavailable', `The cloud provider "${providerId}" has no usable key on this server.`);
    });
    const provider = found?.record;
    const apiKey = found?.apiKey;
    if (!provider || !provider.enabled || !apiKey) {
      throw new BackendError('provider_unavailable', `The cloud provider "${providerId}" is not enabled or has no key.`);
    }
    // The route was checked against the provider when the request arrived; routing may have moved since.
    if (!honours.task(PROVIDER_CAPABILITIES[provider.kind], request.task)) throw cannotTranslate(provider.name);
    const runtime = `${providerId}/${modelId}`;
    try {
      request.onStart?.(); // the provider bills from here, answered or not
      const result = await ADAPTERS[provider.kind]({
        provider,
        apiKey,
        model: modelId,
        request,
        wantsSegments: request.format === 'verbose_json' || request.format === 'srt' || request.format === 'vtt',
        fetch: {
          providerId,
          timeoutMs: Math.ceil(this.limits.timeoutBaseMs + request.durationSeconds * this.limits.timeoutPerAudioSecondMs), // whole ms for AbortSignal.timeout
          signal: request.signal,
          // Checked on every call, where the name is resolved for the connection: a record stored before
          // these rules, or a name whose DNS now points at a metadata address, gets no request (nor the key).
          addressRules: { allowInsecureLoopback: this.limits.allowInsecureLoopback, allowPrivate: this.limits.allowPrivate ?? false },
        },
      });
      this.failures.delete(providerId);
      this.metrics?.providerCalls.inc({ provider: providerId, status: '200' });
      return { result, runtime };
    } catch (err) {
      // Stopped by the request itself (client gone, deadline): the job was aborted, as a local one is; the provider did not fail.
      if (request.signal.aborted) throw new AbortedError();
      if (!(err instanceof ProviderError)) throw err;
      this.recordFailure(providerId, err.status, err.reason, err.message);
      this.metrics?.providerCalls.inc({ provider: providerId, status: String(err.status ?? err.reason) });
      this.metrics?.providerErrors.inc({ provider: providerId, reason: err.reason });
      this.logger.warn({ provider: providerId, status: err.status, reason: err.reason, detail: err.detail ?? err.message }, 'cloud provider failed');
      throw new BackendError('provider_error', clientMessage(provider.name, err));
    }
  }
}
