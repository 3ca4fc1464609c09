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
}

/**
 * The form's text fields as OpenAI names them, per endpoint (besides `file`):
 * the parser accepts exactly these, and routes/openapi.ts publishes exactly
 * these. Translations take OpenAI's smaller set: no language (the output is
 * English), granularities, chunking or streaming.
 */
export const FORM_FIELDS = {
  transcribe: ['model', 'language', 'response_format', 'prompt', 'temperature', 'timestamp_granularities[]', 'chunking_strategy', 'stream'],
  translate: ['model', 'response_format', 'prompt', 'temperature'],
} as const satisfies Record<Task, readonly string[]>;
export type FormField = (typeof FORM_FIELDS)['transcribe'][number];

/** Also accepted: the granularities without brackets, and chunking_strategy's bracketed sub-fields (isChunkingField). */
const TEXT_FIELDS = new Set<string>([...FORM_FIELDS.transcribe, 'timestamp_granularities']);
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
  if (!(RESPONSE_FORMATS as readonly string[]).includes(formatRaw)) {
    throw badRequest('invalid_response_format', `response_format must be one of ${RESPONSE_FORMATS.join(', ')}.`, 'response_format');
  }
  const format = formatRaw as ResponseFormat;

  // 4. language
  const languageRaw = single(fields, 'language');
  const language = languageRaw === undefined || languageRaw === '' ? undefined : languageRaw.trim().toLowerCase();
  if (!honours.language(target, language)) {
    throw badRequest('unsupported_language', `The language "${languageRaw}" is not supported by the active model.`, 'language');
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
  return { task, file, format, language, prompt: prompt || undefined, temperature, granularities, chunkingStrategy, stream };
}

/** OpenAI streams text only: the events carry text, never segments or subtitles. */
function parseStream(raw: string | undefined, format: ResponseFormat): boolean {
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw !== 'true') throw badRequest('invalid_value', 'stream must be true or false.', 'stream');
  if (format !== 'json' && format !== 'text') {
    throw badRequest('invalid_value', 'stream=true sends text events; use response_format json or text with it.', 'stream');
  }
  return true;
}
