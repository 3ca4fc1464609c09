// A client's session update, GA (`session.update`, the settings under
// `session.audio.input`) or beta (`transcription_session.update`, flat),
// checked against what this server does: 24-kHz PCM16 in, transcription
// with a model name it answers to, a language the local runtime knows, and
// turns the client commits (no server-side turn detection yet). Returns the
// new settings, or the error event's fields naming the offending param.
import { MAX_PROMPT_CHARS, honours } from '../../stt/capabilities';
import type { Target } from '../../stt/backends';
import type { Dialect, EventError, SessionSettings } from './events';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const invalid = (code: string, message: string, param: string): EventError => ({ type: 'invalid_request_error', code, message, param });

export const SESSION_UPDATE: Record<string, Dialect> = { 'session.update': 'ga', 'transcription_session.update': 'beta' };

export function parseSessionUpdate(event: Json, current: SessionSettings, target: Target): { settings: SessionSettings; dialect: Dialect } | EventError {
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
    if (format !== undefined && !(isObject(format) && format.type === 'audio/pcm' && (format.rate === undefined || format.rate === 24000))) {
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
  if (turnDetection !== undefined && turnDetection !== null) {
    return invalid('unsupported_turn_detection',
      'Server-side turn detection is not available here yet: send turn_detection: null and end each turn with input_audio_buffer.commit.',
      `${prefix}.turn_detection`);
  }
  const field = dialect === 'ga' ? `${prefix}.transcription` : 'session.input_audio_transcription';
  if (transcription === undefined || transcription === null) return { settings: current, dialect };
  if (!isObject(transcription)) return invalid('invalid_type', `${field} must be an object.`, field);
  const next = { ...current };
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
