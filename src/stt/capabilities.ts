// What each backend can honour, in one table, and the one set of checks every
// "can this backend do X" asks: the form parser (which refuses with a 400
// naming the field), the spill-over plan (which keeps a request local when the
// provider could not honour it) and the cloud service at call time.
import type { ProviderKind } from '../store/providers';
import type { RuntimeSpec } from './catalogue';
import type { ChunkingStrategy } from './chunking';
import { WHISPER_LANGUAGES } from './languages';

export type Task = 'transcribe' | 'translate';
export type Granularity = 'segment' | 'word';

export interface Capabilities {
  /** Languages it accepts as `language`; null: any. */
  languages: ReadonlySet<string> | null;
  supportsPrompt: boolean;
  supportsWords: boolean;
  /** Takes OpenAI's chunking_strategy (local runtimes: Silero VAD). */
  supportsChunking: boolean;
  /** Speech in any language to English text (Whisper's translate task, or the provider's translations endpoint). */
  supportsTranslation: boolean;
  /** include[]=logprobs: each token's log-probability (local Whisper). */
  supportsLogprobs: boolean;
}

/** OpenAI's prompt limit, which the form enforces for every backend. */
export const MAX_PROMPT_CHARS = 4096;
export { inTemperatureRange, TEMPERATURE_RANGE } from '../native/limits';

const OPENAI_LANGUAGES = new Set(Object.keys(WHISPER_LANGUAGES));
const DEEPGRAM_LANGUAGES = new Set(['bg', 'ca', 'zh', 'cs', 'da', 'nl', 'en', 'et', 'fi', 'fr', 'de', 'el', 'hi', 'hu', 'id', 'it',
  'ja', 'ko', 'lv', 'lt', 'ms', 'no', 'pl', 'pt', 'ro', 'ru', 'sk', 'es', 'sv', 'th', 'tr', 'uk', 'vi']);

export const PROVIDER_CAPABILITIES: Record<ProviderKind, Capabilities> = {
  // Logprobs are not asked of a provider: OpenAI gives them for its gpt-4o models only, and not with whisper-1's formats.
  openai: { languages: OPENAI_LANGUAGES, supportsPrompt: true, supportsWords: true, supportsChunking: true, supportsTranslation: true, supportsLogprobs: false },
  deepgram: { languages: DEEPGRAM_LANGUAGES, supportsPrompt: false, supportsWords: true, supportsChunking: false, supportsTranslation: false, supportsLogprobs: false },
};

/** A local runtime's; with none active, everything (the request then gets no_active_model, not a refusal of a field). */
export function localCapabilities(spec: RuntimeSpec | null | undefined): Capabilities {
  return {
    languages: spec?.languages ?? null,
    supportsPrompt: spec?.supportsPrompt ?? true,
    supportsWords: true,
    supportsChunking: true,
    supportsTranslation: spec ? spec.family === 'whisper' : true,
    supportsLogprobs: spec ? spec.family === 'whisper' : true,
  };
}

/** What a request asks of its backend. */
export interface Asks {
  task: Task;
  language?: string;
  prompt?: string;
  granularities: ReadonlySet<Granularity>;
  chunkingStrategy?: ChunkingStrategy;
  logprobs?: boolean;
}

/** Each check once; the form parser calls them in its check order. */
export const honours = {
  task: (c: Capabilities, task: Task) => task !== 'translate' || c.supportsTranslation,
  language: (c: Capabilities, language: string | undefined) => language === undefined || !c.languages || c.languages.has(language),
  prompt: (c: Capabilities, prompt: string | undefined) => !prompt || c.supportsPrompt,
  granularities: (c: Capabilities, granularities: ReadonlySet<Granularity>) => !granularities.has('word') || c.supportsWords,
  chunking: (c: Capabilities, strategy: ChunkingStrategy | undefined) => !strategy || c.supportsChunking,
  logprobs: (c: Capabilities, logprobs: boolean | undefined) => !logprobs || c.supportsLogprobs,
};

/** Whether the backend can honour everything the request asks. */
export function canHonour(c: Capabilities, a: Asks): boolean {
  return honours.task(c, a.task) && honours.language(c, a.language) && honours.prompt(c, a.prompt)
    && honours.granularities(c, a.granularities) && honours.chunking(c, a.chunkingStrategy) && honours.logprobs(c, a.logprobs);
}
