// Cloud routing: resolves the provider record and key, calls its adapter,
// and remembers the last failure per provider for /admin/status.
import { ApiError } from '../../http/errors';
import type { Logger } from '../../log';
import type { ProviderRecord, ProviderStore } from '../../store/providers';
import type { OutputTranscription, ResponseFormat } from '../formats';
import { WHISPER_LANGUAGES } from '../languages';
import type { AdapterCall } from './adapter';
import { deepgramTranscribe } from './deepgram-adapter';
import { openaiTranscribe } from './openai-adapter';
import { ProviderError } from './provider-fetch';

export interface CloudRequest {
  wav: Buffer;
  filename: string;
  format: ResponseFormat;
  language?: string;
  prompt?: string;
  temperature?: number;
  granularities: ReadonlySet<'segment' | 'word'>;
}

export interface CloudCapabilities {
  languages: ReadonlySet<string> | null;
  supportsPrompt: boolean;
  supportsWords: boolean;
}

export interface ProviderFailure {
  status: number | null;
  reason: string;
  message: string;
  at: string;
}

const OPENAI_LANGUAGES = new Set(Object.keys(WHISPER_LANGUAGES));
const DEEPGRAM_LANGUAGES = new Set(['bg', 'ca', 'zh', 'cs', 'da', 'nl', 'en', 'et', 'fi', 'fr', 'de', 'el', 'hi', 'hu', 'id', 'it',
  'ja', 'ko', 'lv', 'lt', 'ms', 'no', 'pl', 'pt', 'ro', 'ru', 'sk', 'es', 'sv', 'th', 'tr', 'uk', 'vi']);

const CAPABILITIES: Record<ProviderRecord['kind'], CloudCapabilities> = {
  openai: { languages: OPENAI_LANGUAGES, supportsPrompt: true, supportsWords: true },
  deepgram: { languages: DEEPGRAM_LANGUAGES, supportsPrompt: false, supportsWords: true },
};

const ADAPTERS: Record<ProviderRecord['kind'], (call: AdapterCall) => Promise<OutputTranscription>> = {
  openai: openaiTranscribe,
  deepgram: deepgramTranscribe,
};

export interface CloudTimeouts {
  baseMs: number;
  perAudioSecondMs: number;
}

export function aliasOf(provider: ProviderRecord, modelId: string): string {
  return provider.models.find((m) => m.id === modelId)?.alias || `${provider.id}/${modelId}`;
}

export class CloudService {
  readonly failures = new Map<string, ProviderFailure>();

  constructor(
    private readonly providers: ProviderStore,
    private readonly timeouts: CloudTimeouts,
    private readonly logger: Logger,
  ) {}

  async aliasFor(providerId: string, modelId: string): Promise<string> {
    const p = await this.providers.get(providerId);
    return p ? aliasOf(p, modelId) : `${providerId}/${modelId}`;
  }

  async capabilities(providerId: string): Promise<CloudCapabilities> {
    const p = await this.providers.get(providerId);
    return CAPABILITIES[p?.kind ?? 'openai'];
  }

  async transcribe(
    providerId: string,
    modelId: string,
    request: CloudRequest & { durationSeconds: number; signal: AbortSignal },
  ): Promise<{ result: OutputTranscription; runtime: string }> {
    const provider = await this.providers.get(providerId);
    const apiKey = await this.providers.apiKey(providerId);
    if (!provider || !provider.enabled || !apiKey) {
      throw new ApiError(502, 'provider_unavailable', `The cloud provider "${providerId}" is not enabled or has no key.`);
    }
    const runtime = `${providerId}/${modelId}`;
    try {
      const result = await ADAPTERS[provider.kind]({
        provider,
        apiKey,
        model: modelId,
        request,
        wantsSegments: request.format === 'verbose_json' || request.format === 'srt' || request.format === 'vtt',
        fetch: {
          providerId,
          timeoutMs: this.timeouts.baseMs + request.durationSeconds * this.timeouts.perAudioSecondMs,
          signal: request.signal,
        },
      });
      this.failures.delete(providerId);
      return { result, runtime };
    } catch (err) {
      if (!(err instanceof ProviderError)) throw err;
      this.failures.set(providerId, { status: err.status, reason: err.reason, message: err.message, at: new Date().toISOString() });
      this.logger.warn({ provider: providerId, status: err.status, reason: err.reason }, 'cloud provider failed');
      const what = err.isAuthFailure ? 'rejected the server\'s credentials' : err.message;
      throw new ApiError(502, 'provider_error', `The cloud provider "${provider.name}" ${what}${err.status && !err.message.includes(String(err.status)) ? ` (HTTP ${err.status})` : ''}.`);
    }
  }
}
