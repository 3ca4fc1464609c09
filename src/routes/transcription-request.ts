// Validates the multipart fields of POST /v1/audio/transcriptions (and of
// /v1/audio/translations, which takes OpenAI's smaller set) in the contract's
// check order, against what the current target can honour.
import { badRequest } from '../http/api-error';
import type { UploadedFile } from '../http/middleware/upload';
import { RESPONSE_FORMATS, type ResponseFormat } from '../stt/formats';
import type { Target } from '../stt/backends';
import { honours, inTemperatureRange, MAX_PROMPT_CHARS, TEMPERATURE_RANGE, type Granularity, type Task } from '../stt/capabilities';
import { cannotTranslate } from '../domain-errors';
import { isChunkingField, parseChunkingStrategy, type ChunkingStrategy } from '../stt/chunking';

export interface TranscriptionRequest {
  task: Task;
  file: UploadedFile;
  format: ResponseFormat;
  language?: string;
  prompt?: string;
  temperature?: number;
  granularities: Set<Granularity>;
  /** Undefined: the host's default (STT_VAD). */
  chunkingStrategy?: ChunkingStrategy;
  /** stream=true: server-sent events as text is decoded (json and text formats). */
  stream: boolean;
  /** include[]=logprobs: each token's log-probability in the json answer. */
  logprobs: boolean;
}

/**
 * The form's text fields as OpenAI names them, per endpoint (besides `file`):
 * the parser accepts exactly these, and routes/openapi.ts publishes exactly
 * these. Translations take OpenAI's smaller set: no language (the output is
 * English), granularities, chunking or streaming.
 */
export const FORM_FIELDS = {
  transcribe: ['model', 'language', 'response_format', 'prompt', 'temperature', 'timestamp_granularities[]', 'chunking_strategy', 'stream',
    'include[]', 'languages[]', 'keywords[]', 'known_speaker_names[]', 'known_speaker_references[]'],
  translate: ['model', 'response_format', 'prompt', 'temperature'],
} as const satisfies Record<Task, readonly string[]>;
export type FormField = (typeof FORM_FIELDS)['transcribe'][number];

/** Also accepted: the list fields without brackets, and chunking_strategy's bracketed sub-fields (isChunkingField). */
const TEXT_FIELDS = new Set<string>([...FORM_FIELDS.transcribe, ...FORM_FIELDS.transcribe.filter((f) => f.endsWith('[]')).map((f) => f.slice(0, -2))]);

/** A list field's values, sent as `name[]` (OpenAI's SDKs) or `name`, once or repeated. */
function listOf(fields: Fields, name: string): unknown[] {
  return [fields[`${name}[]`], fields[name]].flat().filter((v) => v !== undefined);
}
const TRANSLATION_FIELDS = new Set<string>(FORM_FIELDS.translate);

type Fields = Record<string, unknown>;

function single(fields: Fields, name: string): string | undefined {
  const v = fields[name];
  if (v === undefined) return undefined;
  if (Array.isArray(v)) throw badRequest('duplicate_field', `The field "${name}" was sent more than once.`, name);
  if (typeof v !== 'string') throw badRequest('invalid_type', `The field "${name}" must be a text field.`, name);
  return v;
}

export function parseTranscriptionRequest(fields: Fields, files: Record<string, unknown>, target: Target, task: Task = 'transcribe'): TranscriptionRequest {
  // 1. file
  const raw = files.file;
  if (raw === undefined) {
    if (typeof fields.file === 'string') throw badRequest('invalid_type', 'The field "file" must be a file upload, not text.', 'file');
    throw badRequest('missing_file', 'The "file" field is required.', 'file');
  }
  if (Array.isArray(raw)) throw badRequest('duplicate_field', 'Send exactly one "file".', 'file');
  const f = raw as { buffer?: Buffer; originalFilename?: string | null; mimetype?: string | null; size?: number };
  const file: UploadedFile = {
    buffer: f.buffer ?? Buffer.alloc(0),
    originalFilename: f.originalFilename ?? null,
    mimetype: f.mimetype ?? null,
    size: f.size ?? 0,
  };
  for (const name of Object.keys(files)) {
    if (name !== 'file') throw badRequest('unknown_parameter', `Unknown file field "${name}".`, name);
  }
  for (const name of Object.keys(fields)) {
    const known = task === 'translate' ? TRANSLATION_FIELDS.has(name) : TEXT_FIELDS.has(name) || isChunkingField(name);
    if (!known) throw badRequest('unknown_parameter', `Unknown field "${name}"${task === 'translate' ? ' for a translation' : ''}.`, name);
  }

  // 2. model
  const model = single(fields, 'model');
  if (model !== undefined && model !== target.alias && !target.aliases.includes(model)) {
    throw badRequest('model_not_found', `The model "${model}" is not served here; use "${target.alias}".`, 'model');
  }
  if (!honours.task(target, task)) throw cannotTranslate(target.name);

  // 3. response_format
  const formatRaw = single(fields, 'response_format') ?? 'json';
  if (formatRaw === 'diarized_json') {
    throw badRequest('unsupported_value', `response_format diarized_json needs speaker diarization, which this server does not do; use one of ${RESPONSE_FORMATS.join(', ')}.`, 'response_format');
  }
  if (!(RESPONSE_FORMATS as readonly string[]).includes(formatRaw)) {
    throw badRequest('invalid_response_format', `response_format must be one of ${RESPONSE_FORMATS.join(', ')}.`, 'response_format');
  }
  const format = formatRaw as ResponseFormat;

  // 4. language (or OpenAI's languages[] with one entry)
  const languageField = single(fields, 'language') ? 'language' : 'languages[]';
  const languageRaw = oneLanguage(single(fields, 'language'), listOf(fields, 'languages'));
  const language = languageRaw === undefined || languageRaw === '' ? undefined : languageRaw.trim().toLowerCase();
  if (!honours.language(target, language)) {
    throw badRequest('unsupported_language', `The language "${languageRaw}" is not supported by the active model.`, languageField);
  }

  // Then the optional OpenAI fields, each rejected when the target cannot honour it.
  const prompt = single(fields, 'prompt');
  if (prompt !== undefined && prompt !== '') {
    if (!honours.prompt(target, prompt)) throw badRequest('unsupported_parameter', 'The active model does not accept a prompt.', 'prompt');
    if (prompt.length > MAX_PROMPT_CHARS) throw badRequest('invalid_value', `prompt is limited to ${MAX_PROMPT_CHARS} characters.`, 'prompt');
  }
  const temperatureRaw = single(fields, 'temperature');
  let temperature: number | undefined;
  if (temperatureRaw !== undefined && temperatureRaw !== '') {
    temperature = Number(temperatureRaw);
    // Any decimal number a client's serializer writes ('0.', '1e-7', '+0.5'), not hex, Infinity or NaN.
    if (!/^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(temperatureRaw) || !inTemperatureRange(temperature)) {
      throw badRequest('invalid_value', `temperature must be a number between ${TEMPERATURE_RANGE.min} and ${TEMPERATURE_RANGE.max}.`, 'temperature');
    }
  }
  const granularityValues = [fields['timestamp_granularities[]'], fields.timestamp_granularities]
    .flat()
    .filter((v): v is unknown => v !== undefined);
  const granularities = new Set<Granularity>();
  for (const g of granularityValues) {
    if (g !== 'segment' && g !== 'word') {
      throw badRequest('invalid_value', 'timestamp_granularities[] accepts "segment" and "word".', 'timestamp_granularities[]');
    }
    granularities.add(g);
  }
  if (granularities.size > 0 && format !== 'verbose_json') {
    throw badRequest('invalid_value', 'timestamp_granularities[] requires response_format=verbose_json.', 'timestamp_granularities[]');
  }
  if (!honours.granularities(target, granularities)) {
    throw badRequest('unsupported_parameter', 'The selected provider does not return word timestamps.', 'timestamp_granularities[]');
  }
  if (granularities.size === 0) granularities.add('segment');
  const chunkingStrategy = parseChunkingStrategy(fields);
  if (!honours.chunking(target, chunkingStrategy)) {
    throw badRequest('unsupported_parameter', 'The selected provider does not take chunking_strategy.', 'chunking_strategy');
  }
  const stream = parseStream(single(fields, 'stream'), format);
  const logprobs = parseInclude(listOf(fields, 'include'), format, target);
  refuseDiarization(fields);
  if (listOf(fields, 'keywords').length > 0) {
    throw badRequest('unsupported_parameter', 'keywords[] is not supported here; a prompt that contains the words is the nearest Whisper has.', 'keywords[]');
  }
  return { task, file, format, language, prompt: prompt || undefined, temperature, granularities, chunkingStrategy, stream, logprobs };
}

/** `language`, or the one entry of `languages[]` (gpt-transcribe's field); Whisper cannot be held to a set of several. */
function oneLanguage(language: string | undefined, languages: unknown[]): string | undefined {
  if (languages.length === 0) return language;
  if (languages.some((l) => typeof l !== 'string')) throw badRequest('invalid_type', 'languages[] takes text values.', 'languages[]');
  if (languages.length > 1) throw badRequest('unsupported_value', 'languages[] may name one language here: Whisper detects among all of them or takes one.', 'languages[]');
  const only = languages[0] as string;
  if (language !== undefined && language !== '' && language.trim().toLowerCase() !== only.trim().toLowerCase()) {
    throw badRequest('invalid_value', 'language and languages[] name different languages.', 'languages[]');
  }
  return only;
}

/** include[]: "logprobs" only, with response_format json (as OpenAI), from a backend that has them. */
function parseInclude(values: unknown[], format: ResponseFormat, target: Target): boolean {
  if (values.length === 0) return false;
  if (values.some((v) => v !== 'logprobs')) throw badRequest('invalid_value', 'include[] accepts "logprobs".', 'include[]');
  if (format !== 'json') throw badRequest('invalid_value', 'include[]=logprobs requires response_format=json.', 'include[]');
  if (!honours.logprobs(target, true)) throw badRequest('unsupported_parameter', `${target.name} does not give token log-probabilities.`, 'include[]');
  return true;
}

/** Known speakers belong to diarization, which no backend here does. */
function refuseDiarization(fields: Fields): void {
  for (const name of ['known_speaker_names', 'known_speaker_references']) {
    if (listOf(fields, name).length > 0) {
      throw badRequest('unsupported_parameter', `${name}[] needs speaker diarization, which this server does not do.`, `${name}[]`);
    }
  }
}

/**
 * OpenAI streams text only (json and text): the events carry text, never
 * segments or subtitles. With another format, stream=true is ignored and the
 * plain answer sent, as OpenAI does for whisper-1 ("Streaming is not supported
 * for the whisper-1 model and will be ignored"); LiteLLM sends stream=true
 * with verbose_json and reads the plain answer.
 */
function parseStream(raw: string | undefined, format: ResponseFormat): boolean {
  const value = raw?.trim().toLowerCase();
  if (value === undefined || value === '' || value === 'false') return false;
  if (value !== 'true') throw badRequest('invalid_value', 'stream must be true or false.', 'stream');
  return format === 'json' || format === 'text';
}
