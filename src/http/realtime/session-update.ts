// A client's session update, GA (`session.update`, the settings under
// `session.audio.input`) or beta (`transcription_session.update`, flat),
// checked against what this server does: 24-kHz PCM16 in, transcription
// with a model name it answers to, a language the local runtime knows, and
// turns the client commits or Silero cuts (`server_vad`). Returns the
// new settings, or the error event's fields naming the offending param.
import { MAX_PROMPT_CHARS, honours } from '../../stt/capabilities';
import type { Target } from '../../stt/backends';
import { INPUT_RATE, type Dialect, type EventError, type SessionSettings } from './events';
import { SERVER_VAD_DEFAULTS, type ServerVadSettings } from './turn-detector';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const invalid = (code: string, message: string, param: string): EventError => ({ type: 'invalid_request_error', code, message, param });

export const SESSION_UPDATE: Record<string, Dialect> = { 'session.update': 'ga', 'transcription_session.update': 'beta' };

/** A number in [min, max], or the default when absent; an EventError naming `param` otherwise. */
function numberIn(value: unknown, param: string, min: number, max: number, fallback: number, whole: boolean): number | EventError {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max || (whole && !Number.isInteger(value))) {
    return invalid('invalid_value', `${param} must be ${whole ? 'a whole number' : 'a number'} from ${min} to ${max}.`, param);
  }
  return value;
}

/**
 * `turn_detection`: null (the client commits each turn) or `server_vad`
 * with OpenAI's fields (threshold, prefix_padding_ms, silence_duration_ms;
 * create_response and interrupt_response concern conversations and are
 * ignored). `semantic_vad` needs a model of turn endings this server does not have.
 */
function parseTurnDetection(value: unknown, param: string, vadAvailable: boolean): ServerVadSettings | null | EventError {
  if (value === null) return null;
  if (!isObject(value)) return invalid('invalid_type', `${param} must be an object or null.`, param);
  if (value.type !== 'server_vad') {
    return invalid('unsupported_turn_detection',
      `Turn detection "${String(value.type)}" is not available here: use {"type": "server_vad"}, or null and end each turn with input_audio_buffer.commit.`, `${param}.type`);
  }
  if (!vadAvailable) {
    return invalid('unsupported_turn_detection',
      'server_vad needs the Silero VAD model, which is not installed here: send turn_detection: null and end each turn with input_audio_buffer.commit.', param);
  }
  const threshold = numberIn(value.threshold, `${param}.threshold`, 0, 1, SERVER_VAD_DEFAULTS.threshold, false);
  if (typeof threshold !== 'number') return threshold;
  const padding = numberIn(value.prefix_padding_ms, `${param}.prefix_padding_ms`, 0, 5000, SERVER_VAD_DEFAULTS.prefix_padding_ms, true);
  if (typeof padding !== 'number') return padding;
  const silence = numberIn(value.silence_duration_ms, `${param}.silence_duration_ms`, 32, 10_000, SERVER_VAD_DEFAULTS.silence_duration_ms, true);
  if (typeof silence !== 'number') return silence;
  return { type: 'server_vad', threshold, prefix_padding_ms: padding, silence_duration_ms: silence };
}

export function parseSessionUpdate(event: Json, current: SessionSettings, target: Target, vadAvailable: boolean): { settings: SessionSettings; dialect: Dialect } | EventError {
  const dialect = SESSION_UPDATE[String(event.type)];
  const session = event.session;
  if (!isObject(session)) return invalid('missing_required_parameter', 'session must be an object.', 'session');
  let input: Json;
  let prefix: string;
  let transcription: unknown;
  let turnDetection: unknown;
  if (dialect === 'ga') {
    if (session.type !== undefined && session.type !== 'transcription') {
      return invalid('unsupported_session_type', `This server serves transcription sessions only, not "${String(session.type)}".`, 'session.type');
    }
    const audio = session.audio === undefined ? {} : session.audio;
    if (!isObject(audio)) return invalid('invalid_type', 'session.audio must be an object.', 'session.audio');
    input = audio.input === undefined ? {} : (audio.input as Json);
    if (!isObject(input)) return invalid('invalid_type', 'session.audio.input must be an object.', 'session.audio.input');
    prefix = 'session.audio.input';
    const format = input.format;
    if (format !== undefined && !(isObject(format) && format.type === 'audio/pcm' && (format.rate === undefined || format.rate === INPUT_RATE))) {
      return invalid('unsupported_audio_format', 'This server takes audio/pcm at 24000 Hz (16-bit little-endian mono).', `${prefix}.format`);
    }
    transcription = input.transcription;
    turnDetection = input.turn_detection;
  } else {
    input = session;
    prefix = 'session';
    if (session.input_audio_format !== undefined && session.input_audio_format !== 'pcm16') {
      return invalid('unsupported_audio_format', 'This server takes pcm16 (24000 Hz, 16-bit little-endian mono).', 'session.input_audio_format');
    }
    transcription = session.input_audio_transcription;
    turnDetection = session.turn_detection;
  }
  const next = { ...current };
  if (turnDetection !== undefined) {
    const parsed = parseTurnDetection(turnDetection, `${prefix}.turn_detection`, vadAvailable);
    if (parsed !== null && 'code' in parsed) return parsed;
    next.turnDetection = parsed;
  }
  const field = dialect === 'ga' ? `${prefix}.transcription` : 'session.input_audio_transcription';
  if (transcription === undefined || transcription === null) return { settings: next, dialect };
  if (!isObject(transcription)) return invalid('invalid_type', `${field} must be an object.`, field);
  if (transcription.model !== undefined) {
    const model = transcription.model;
    if (typeof model !== 'string' || !(model === target.alias || target.aliases.includes(model))) {
      return invalid('model_not_found', `The model "${String(model)}" is not served here; use "${target.alias}".`, `${field}.model`);
    }
    next.model = model;
  }
  if (transcription.language !== undefined) {
    const raw = transcription.language;
    if (raw !== null && typeof raw !== 'string') return invalid('invalid_type', 'language must be a string or null.', `${field}.language`);
    const language = raw ? raw.trim().toLowerCase() : null;
    if (language !== null && !honours.language(target, language)) {
      return invalid('unsupported_language', `The language "${raw}" is not supported by the active model.`, `${field}.language`);
    }
    next.language = language;
  }
  if (transcription.prompt !== undefined) {
    const prompt = transcription.prompt;
    if (prompt !== null && typeof prompt !== 'string') return invalid('invalid_type', 'prompt must be a string or null.', `${field}.prompt`);
    if (prompt && !honours.prompt(target, prompt)) return invalid('unsupported_parameter', 'The active model does not accept a prompt.', `${field}.prompt`);
    if (prompt && prompt.length > MAX_PROMPT_CHARS) return invalid('invalid_value', `prompt is limited to ${MAX_PROMPT_CHARS} characters.`, `${field}.prompt`);
    next.prompt = prompt || null;
  }
  return { settings: next, dialect };
}
