// What every provider adapter receives.
import type { ProviderRecord } from '../../store/providers';
import type { ProviderFetchOptions } from './provider-fetch';
import type { ResponseFormat } from '../formats';
import type { ChunkingStrategy } from '../chunking';
import type { Granularity, Task } from '../capabilities';

/** A transcription as a provider is asked for it. */
export interface CloudRequest {
  /** translate: English text from the provider's translations endpoint. */
  task: Task;
  wav: Buffer;
  filename: string;
  format: ResponseFormat;
  language?: string;
  prompt?: string;
  temperature?: number;
  granularities: ReadonlySet<Granularity>;
  chunkingStrategy?: ChunkingStrategy;
  /** Streaming: pieces of text as the runtime or provider decodes them, in order. */
  onText?: (text: string) => void;
}

export interface AdapterCall {
  provider: ProviderRecord;
  apiKey: string;
  model: string;
  request: CloudRequest & { durationSeconds: number };
  /** Whether the client's response format needs segments (verbose_json, srt, vtt). */
  wantsSegments: boolean;
  fetch: ProviderFetchOptions;
}

/** The media type of an upload forwarded as `audio.<container>` (the transcription route names it by what the bytes are). */
export function mediaTypeOf(filename: string): string {
  const ext = filename.slice(filename.lastIndexOf('.') + 1).toLowerCase();
  return ({ wav: 'audio/wav', mp3: 'audio/mpeg', flac: 'audio/flac', ogg: 'audio/ogg', webm: 'audio/webm' } as Record<string, string>)[ext] ?? 'application/octet-stream';
}
