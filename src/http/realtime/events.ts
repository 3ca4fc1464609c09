// The server events of OpenAI's realtime transcription sessions, in the two
// dialects clients speak (docs/decisions/046-live-audio-plan.md): GA
// (`session.*`, the session under `audio.input`) and beta
// (`transcription_session.*`, the session's fields flat). Only their shapes
// live here; src/http/realtime/session.ts decides when each is sent.
import { randomBytes } from 'node:crypto';
import type { ServerVadSettings } from './turn-detector';

export type Dialect = 'ga' | 'beta';

/** The one input rate sessions take: 24-kHz PCM16 mono, as OpenAI's `audio/pcm`. */
export const INPUT_RATE = 24000;

/** What a session is set to: what `session.update` may change. */
export interface SessionSettings {
  model: string;
  language: string | null;
  prompt: string | null;
  /** null: the client commits each turn. */
  turnDetection: ServerVadSettings | null;
}

/** OpenAI-style ids: a prefix and 20 random characters. */
export const newId = (prefix: 'event' | 'item' | 'sess'): string => `${prefix}_${randomBytes(15).toString('base64url').slice(0, 20)}`;

const transcription = (s: SessionSettings) => ({ model: s.model, language: s.language, prompt: s.prompt });

/** `session.created` / `.updated` (GA) or `transcription_session.created` / `.updated` (beta). */
export function sessionEvent(dialect: Dialect, kind: 'created' | 'updated', id: string, s: SessionSettings) {
  if (dialect === 'beta') {
    return {
      type: `transcription_session.${kind}`,
      event_id: newId('event'),
      session: {
        id,
        object: 'realtime.transcription_session',
        input_audio_format: 'pcm16',
        input_audio_transcription: transcription(s),
        turn_detection: s.turnDetection,
        input_audio_noise_reduction: null,
        include: [],
      },
    };
  }
  return {
    type: `session.${kind}`,
    event_id: newId('event'),
    session: {
      type: 'transcription',
      id,
      object: 'realtime.transcription_session',
      audio: {
        input: {
          format: { type: 'audio/pcm', rate: INPUT_RATE },
          transcription: transcription(s),
          turn_detection: s.turnDetection,
          noise_reduction: null,
        },
      },
      include: [],
    },
  };
}

export const committed = (itemId: string, previousItemId: string | null) =>
  ({ type: 'input_audio_buffer.committed', event_id: newId('event'), item_id: itemId, previous_item_id: previousItemId });

export const speechStarted = (itemId: string, audioStartMs: number) =>
  ({ type: 'input_audio_buffer.speech_started', event_id: newId('event'), audio_start_ms: audioStartMs, item_id: itemId });

export const speechStopped = (itemId: string, audioEndMs: number) =>
  ({ type: 'input_audio_buffer.speech_stopped', event_id: newId('event'), audio_end_ms: audioEndMs, item_id: itemId });

export const cleared = () => ({ type: 'input_audio_buffer.cleared', event_id: newId('event') });

export const itemCreated = (itemId: string, previousItemId: string | null) => ({
  type: 'conversation.item.created',
  event_id: newId('event'),
  previous_item_id: previousItemId,
  item: { id: itemId, object: 'realtime.item', type: 'message', status: 'completed', role: 'user', content: [{ type: 'input_audio', transcript: null }] },
});

export const transcriptDelta = (itemId: string, delta: string) =>
  ({ type: 'conversation.item.input_audio_transcription.delta', event_id: newId('event'), item_id: itemId, content_index: 0, delta });

export const transcriptCompleted = (itemId: string, transcript: string, seconds: number) => ({
  type: 'conversation.item.input_audio_transcription.completed',
  event_id: newId('event'),
  item_id: itemId,
  content_index: 0,
  transcript,
  usage: { type: 'duration', seconds: Math.round(seconds * 1000) / 1000 },
});

/** An error in the contract's envelope fields, as OpenAI's realtime events carry it. */
export interface EventError {
  type: string;
  code: string;
  message: string;
  param: string | null;
}

export const transcriptFailed = (itemId: string, error: EventError) =>
  ({ type: 'conversation.item.input_audio_transcription.failed', event_id: newId('event'), item_id: itemId, content_index: 0, error });

/** `error`: `clientEventId` names the client event it answers, when it had one. */
export const errorEvent = (error: EventError, clientEventId: string | null = null) =>
  ({ type: 'error', event_id: newId('event'), error: { ...error, event_id: clientEventId } });
