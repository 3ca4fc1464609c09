// OpenAI's `chunking_strategy` field: "auto", or a server_vad object, sent as
// a JSON text field or, as the SDKs flatten objects in multipart forms, as
// `chunking_strategy[type]`, `chunking_strategy[threshold]`, ... fields.
import { InvalidInputError } from '../domain-errors';

export type ChunkingStrategy =
  | { type: 'auto' }
  | { type: 'server_vad'; threshold: number; prefixPaddingMs: number; silenceDurationMs: number };

/** OpenAI's defaults for a server_vad object's fields (API reference, createTranscription). */
const SERVER_VAD_DEFAULTS = { threshold: 0.5, prefix_padding_ms: 300, silence_duration_ms: 200 };
const FIELD = 'chunking_strategy';
const MAX_MS = 10_000;

const invalid = (message: string) => new InvalidInputError('invalid_value', message, FIELD);

/** The field names this parser reads, for the route's unknown-field check. */
export function isChunkingField(name: string): boolean {
  return name === FIELD || /^chunking_strategy\[[a-z_]+\]$/.test(name);
}

export function parseChunkingStrategy(fields: Record<string, unknown>): ChunkingStrategy | undefined {
  const flat = Object.keys(fields).filter((k) => k.startsWith(`${FIELD}[`));
  const raw = fields[FIELD];
  if (raw !== undefined && flat.length) throw invalid(`Send ${FIELD} either as one field or as ${FIELD}[...] fields, not both.`);
  let value: unknown;
  if (flat.length) {
    value = Object.fromEntries(flat.map((k) => [k.slice(FIELD.length + 1, -1), fields[k]]));
  } else if (raw === undefined || raw === '') {
    return undefined;
  } else if (Array.isArray(raw)) {
    throw new InvalidInputError('duplicate_field', `The field "${FIELD}" was sent more than once.`, FIELD);
  } else if (typeof raw !== 'string') {
    throw new InvalidInputError('invalid_type', `The field "${FIELD}" must be a text field.`, FIELD);
  } else if (raw.trim() === 'auto') {
    return { type: 'auto' };
  } else {
    try {
      value = JSON.parse(raw);
    } catch {
      throw invalid(`${FIELD} must be "auto" or a JSON object such as {"type": "server_vad"}.`);
    }
  }
  if (value === 'auto') return { type: 'auto' };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid(`${FIELD} must be "auto" or an object with "type": "server_vad".`);
  }
  const o = value as Record<string, unknown>;
  if (o.type !== 'server_vad') throw invalid(`${FIELD}.type must be "server_vad".`);
  for (const key of Object.keys(o)) {
    if (key !== 'type' && !Object.hasOwn(SERVER_VAD_DEFAULTS, key)) throw invalid(`${FIELD} has no field "${key}".`);
  }
  // Form fields arrive as text, JSON as numbers: both are read as decimals.
  const number = (key: keyof typeof SERVER_VAD_DEFAULTS, max: number, integer: boolean): number => {
    const v = o[key];
    if (v === undefined) return SERVER_VAD_DEFAULTS[key];
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+(\.\d*)?\s*$/.test(v) ? Number(v) : NaN;
    if (!(n >= 0 && n <= max) || (integer && !Number.isInteger(n))) {
      throw invalid(`${FIELD}.${key} must be ${integer ? `an integer from 0 to ${max}` : `a number from 0 to ${max}`}.`);
    }
    return n;
  };
  return {
    type: 'server_vad',
    threshold: number('threshold', 1, false),
    prefixPaddingMs: number('prefix_padding_ms', MAX_MS, true),
    silenceDurationMs: number('silence_duration_ms', MAX_MS, true),
  };
}

/** The field as an OpenAI-compatible provider takes it. */
export function chunkingFieldValue(c: ChunkingStrategy): string {
  if (c.type === 'auto') return 'auto';
  return JSON.stringify({ type: 'server_vad', threshold: c.threshold, prefix_padding_ms: c.prefixPaddingMs, silence_duration_ms: c.silenceDurationMs });
}
