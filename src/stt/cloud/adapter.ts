// What every provider adapter receives.
import type { ProviderRecord } from '../../store/providers';
import type { CloudRequest } from './service';
import type { ProviderFetchOptions } from './provider-fetch';

export interface AdapterCall {
  provider: ProviderRecord;
  apiKey: string;
  model: string;
  request: CloudRequest & { durationSeconds: number };
  /** Whether the client's response format needs segments (verbose_json, srt, vtt). */
  wantsSegments: boolean;
  fetch: ProviderFetchOptions;
}
