// Cloud routing: resolves providers and hands requests to their adapters.
import type { OutputTranscription } from '../formats';

export interface CloudRequest {
  wav: Buffer;
  filename: string;
  language?: string;
  prompt?: string;
  temperature?: number;
  granularities: ReadonlySet<'segment' | 'word'>;
}

export interface CloudCapabilities {
  languages: ReadonlySet<string> | null;
  supportsPrompt: boolean;
  supportsWords: boolean;
  supportsTranslate: boolean;
}

export interface CloudService {
  aliasFor(providerId: string, modelId: string): Promise<string>;
  capabilities(providerId: string): Promise<CloudCapabilities>;
  transcribe(
    providerId: string,
    modelId: string,
    request: CloudRequest & { durationSeconds: number; signal: AbortSignal },
  ): Promise<{ result: OutputTranscription; runtime: string }>;
}
