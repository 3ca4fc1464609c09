// One realtime transcription session on an open WebSocket: the client
// appends 24-kHz PCM16 to a buffer, and a turn ends when the client commits
// it or, with `server_vad`, when Silero hears the speech stop (server-vad.ts);
// each turn is resampled to 16 kHz and transcribed on the local runtime like a short
// upload (the scheduler's fast lane, fair among keys), and its text comes
// back as `.completed`. While a server_vad turn is being heard, a draft of
// it is decoded after each second of new audio when the engine has a slot
// nobody waits for, and the words two drafts agree on go out as deltas
// (agreed-words.ts); the turn's own transcription adds the rest. Turns are
// answered in the order they were committed. Bounded: the buffer's length, turns waiting (past which
// the socket stops being read, so a client sending faster than real time is
// slowed by TCP, not queued in memory), outbound bytes, idle time, session
// length, and bad events in a row.
import type { WebSocket } from 'ws';
import type { ApiKeyRecord } from '../../store/api-keys';
import type { Backends } from '../../stt/backends';
import type { Logger } from '../../log';
import type { KeyLimiter } from '../key-limiter';
import { ApiError } from '../api-error';
import { knownApiError } from '../error-map';
import { parseSessionUpdate, SESSION_UPDATE } from './session-update';
import { HeldAudio } from './held-audio';
import { AgreedWords } from './agreed-words';
import { languageCode } from '../../stt/languages';
import { ServerVad } from './server-vad';
import { SERVER_VAD_DEFAULTS, type ServerVadSettings } from './turn-detector';
import {
  cleared, committed, errorEvent, itemCreated, newId, sessionEvent, speechStarted, speechStopped, transcriptCompleted, transcriptDelta, transcriptFailed,
  INPUT_RATE, type Dialect, type EventError, type SessionSettings,
} from './events';

/** A position on the session's 24-kHz timeline in milliseconds, as OpenAI's audio_start_ms and audio_end_ms count. */
const toMs = (position: number) => Math.round((position / INPUT_RATE) * 1000);
/** OpenAI's floor for a commit ("buffer too small. Expected at least 100ms of audio"). */
const MIN_COMMIT_SECONDS = 0.1;
/** Past this many bad events in a row the client is not speaking the protocol: close 1008. */
const MAX_BAD_EVENTS = 20;
/** Outbound bytes not yet written before the session is cut (a client that stopped reading). */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** Events received and not yet handled past which the socket stops being read. */
const MAX_INBOX_EVENTS = 16;
/** Their bytes, likewise: 16 appends of 2 MiB (ws's maxPayload) would otherwise be 32 MiB a session. */
const MAX_INBOX_BYTES = 4 * 1024 * 1024;

/** Whether a session's socket should stop being read: shutting down, or more received than it is served. */
export function inboxFull(s: { ending: boolean; waitingTurns: number; maxWaitingTurns: number; inboxEvents: number; inboxBytes: number }): boolean {
  return s.ending || s.waitingTurns >= s.maxWaitingTurns || s.inboxEvents >= MAX_INBOX_EVENTS || s.inboxBytes >= MAX_INBOX_BYTES;
}
/** The prefix padding in whole 24-kHz samples: (ms / 1000) * rate is fractional in floats for many ms (280 ms: 6720.000000000001). */
const paddingSamples = (ms: number): number => Math.round((ms * INPUT_RATE) / 1000);
/** New audio in a turn being heard before it is drafted again (and the least a first draft is made of). */
const DRAFT_EVERY_SECONDS = 1;
/**
 * A turn is drafted while it is at most this long: a draft decodes the whole
 * turn so far, in one window under Whisper's 30 s (past that it would take
 * several full windows, and each later draft more).
 */
const DRAFT_MAX_SECONDS = 25;
/** Whisper's sample rate: what HeldAudio gives. */
const MODEL_RATE = 16_000;

export interface SessionLimits {
  /** Longest uncommitted buffer, in seconds. */
  maxBufferSeconds: number;
  /** Turns committed and not yet answered before the socket stops being read. */
  maxWaitingTurns: number;
  idleMs: number;
  maxSessionMs: number;
}

export interface SessionParts {
  stt: Backends;
  keyLimiter: KeyLimiter;
  logger: Logger;
  limits: SessionLimits;
  /** The Silero model server_vad listens with; null where it is not installed (turns are then the client's to commit). */
  vadModelPath: string | null;
  /** The key's record as stored now: a key revoked, or given other limits, since the session opened. */
  keyNow(id: string): Promise<ApiKeyRecord | undefined>;
  /** Whether turns being heard are drafted for deltas (STT_REALTIME_DRAFTS). */
  drafts: boolean;
  /** Counts a committed turn by what ended it (the metrics' stt_realtime_turns_total). */
  turnsEnded(by: TurnEnd): void;
  /** Counts a draft decoded (stt_realtime_drafts_total). */
  drafted(): void;
  /** Counts a turn whose transcript departed from the deltas its drafts sent (stt_realtime_drafts_revised_total). */
  draftsRevised(): void;
}

export type TurnEnd = 'server_vad' | 'commit' | 'buffer_limit';

interface HeardTurn {
  itemId: string;
  from: number;
  /** Timeline position the last draft reached (`from` before the first). */
  draftedTo: number;
  /** Timeline position the draft that last sent a delta reached: the audio whose text was shown. */
  shownTo: number;
  words: AgreedWords;
  /** The language the first draft found, when the session sets none: later drafts skip detecting it again. */
  language?: string;
}

/** The seconds of a heard turn whose text its deltas showed. */
const shownSeconds = (turn: HeardTurn) => (turn.shownTo - turn.from) / INPUT_RATE;

const invalid = (code: string, message: string, param: string | null = null): EventError => ({ type: 'invalid_request_error', code, message, param });

/** The event fields of anything a turn can fail with; internal errors say no more than that. */
function eventErrorOf(err: unknown): { error: EventError; internal: boolean } {
  const api = knownApiError(err) ?? new ApiError(500, 'internal_error', 'Internal server error.');
  const { type, code, message, param } = api.toBody().error;
  return { error: { type, code, message, param }, internal: !knownApiError(err) };
}

export class RealtimeSession {
  readonly id = newId('sess');
  private settings: SessionSettings;
  private readonly held = new HeldAudio();
  /** Listening for turns (server_vad), or null: the client commits them. */
  private vad: ServerVad | null = null;
  /** The listener kept loaded while server_vad is off, for when it is turned on again. */
  private spareVad: ServerVad | null = null;
  /** The turn Silero hears now: its item id, where its audio starts (prefix padding included), and its drafts. */
  private speech: HeardTurn | null = null;
  /** The draft being decoded, if any (one per session at a time): aborted when its turn ends. */
  private drafting: AbortController | null = null;
  private lastItemId: string | null = null;
  private turns: Promise<void> = Promise.resolve();
  /** Events are handled one after another, in the order they came (an update reads the routing first). */
  private inbox: Promise<void> = Promise.resolve();
  private waitingTurns = 0;
  private inboxEvents = 0;
  private inboxBytes = 0;
  private badEvents = 0;
  /** The last read of the key failed (the store out of reach): warned of once. */
  private keyReadFailing = false;
  private paused = false;
  /** Shutting down: no new turns, the socket no longer read. */
  private ending = false;
  private closed = false;
  private readonly abort = new AbortController();
  private idleTimer: NodeJS.Timeout | null = null;
  private readonly lifeTimer: NodeJS.Timeout;

  constructor(
    private readonly ws: WebSocket,
    private dialect: Dialect,
    private key: ApiKeyRecord,
    model: string,
    private readonly parts: SessionParts,
  ) {
    // OpenAI's default for transcription sessions is server_vad; it is ours wherever the VAD model is installed (and loads).
    this.settings = { model, language: null, prompt: null, turnDetection: parts.vadModelPath ? SERVER_VAD_DEFAULTS : null };
    if (this.listen(this.settings.turnDetection)) this.settings = { ...this.settings, turnDetection: null };
    ws.on('message', (data, isBinary) => {
      const bytes = (data as Buffer).length;
      this.inboxEvents++;
      this.inboxBytes += bytes;
      this.applyPause();
      this.inbox = this.inbox
        .then(() => this.receive(data as Buffer, isBinary))
        .catch((err: Error) => {
          parts.logger.error({ session: this.id, err: err.message }, 'realtime event failed');
          this.fail('internal_error', 'Internal server error.', 'server_error');
        })
        .finally(() => {
          this.inboxEvents--;
          this.inboxBytes -= bytes;
          this.applyPause();
        });
    });
    ws.on('close', () => this.dispose());
    ws.on('error', (err) => parts.logger.debug({ session: this.id, err: err.message }, 'realtime socket error'));
    this.lifeTimer = setTimeout(() => this.fail('session_expired', `A session lasts at most ${Math.round(parts.limits.maxSessionMs / 60_000)} minutes; open a new one.`), parts.limits.maxSessionMs);
    this.lifeTimer.unref();
    this.touch();
    this.send(sessionEvent(this.dialect, 'created', this.id, this.settings));
  }

  /**
   * Ends the session (shutdown): reads no more events and takes no new
   * turns, answers the turns already committed, then sends `error
   * shutting_down` and closes with 1001.
   */
  async end(): Promise<void> {
    this.ending = true;
    this.applyPause();
    // The events already received are handled; a turn still being heard is committed with what came.
    await this.inbox.catch(() => undefined);
    if (this.speech && !this.closed) this.endSpeech(this.held.end, 'server_vad');
    while (this.waitingTurns > 0 && !this.closed) await this.turns;
    if (this.closed) return;
    this.send(errorEvent({ type: 'server_error', code: 'shutting_down', message: 'The server is shutting down; open a new session shortly or on another instance.', param: null }));
    this.closeWith(1001, 'server shutting down');
  }

  /**
   * Starts the close. A paused socket is read again, so that the client's
   * close reply is seen now rather than at ws's close timeout (30 s, the
   * key's session slot held meanwhile); what else arrives is ignored
   * (receive: the socket is no longer open).
   */
  private closeWith(code: number, reason: string): void {
    this.ws.close(code, reason);
    if (this.paused) {
      this.paused = false;
      this.ws.resume();
    }
  }

  /**
   * The socket is read only while fewer than maxWaitingTurns turns wait and
   * the inbox is short in events and bytes: a client sending faster than it
   * is served is slowed by TCP instead of queued in memory.
   */
  private applyPause(): void {
    const { ending, waitingTurns, inboxEvents, inboxBytes } = this;
    const pause = inboxFull({ ending, waitingTurns, maxWaitingTurns: this.parts.limits.maxWaitingTurns, inboxEvents, inboxBytes });
    if (pause === this.paused || this.closed || this.ws.readyState !== this.ws.OPEN) return;
    this.paused = pause;
    if (pause) this.ws.pause();
    else this.ws.resume();
  }

  terminate(): void {
    this.ws.terminate();
  }

  private send(event: object): void {
    if (this.closed || this.ws.readyState !== this.ws.OPEN) return;
    if (this.ws.bufferedAmount > MAX_BUFFERED_BYTES) {
      this.parts.logger.warn({ session: this.id }, 'realtime client stopped reading: session cut');
      this.ws.terminate();
      return;
    }
    this.ws.send(JSON.stringify(event));
  }

  /**
   * Re-reads the key before a turn or a draft is transcribed, so new limits
   * apply; a revoked key closes the session (invalid_api_key) and false is
   * returned. A store that cannot answer leaves the record read last (as
   * STT_STORE_GRACE_S keeps serving keys read last), warned of once until it
   * answers again (drafts read the key about once a second).
   */
  private async keyStillValidOrClose(): Promise<boolean> {
    try {
      const now = await this.parts.keyNow(this.key.id);
      this.keyReadFailing = false;
      if (!now || now.revokedAt) {
        if (!this.closed) this.fail('invalid_api_key', 'This session\'s API key was revoked; the session is closed.');
        return false;
      }
      this.key = now;
    } catch (err) {
      if (!this.keyReadFailing) this.parts.logger.warn({ session: this.id, err: (err as Error).message }, 'realtime: the key could not be read again; the record read last is used');
      this.keyReadFailing = true;
    }
    return true;
  }

  /** An `error` event, and the session closed (1008) after it. */
  private fail(code: string, message: string, type = 'invalid_request_error'): void {
    this.send(errorEvent({ ...invalid(code, message), type }));
    this.closeWith(1008, code);
  }

  /** Restarts the idle clock; it does not run out while committed turns are still being transcribed. */
  private touch(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.waitingTurns > 0) return this.touch();
      this.fail('session_idle_timeout', `No event for ${this.parts.limits.idleMs / 1000} s: session closed.`);
    }, this.parts.limits.idleMs);
    this.idleTimer.unref();
  }

  private refuse(error: EventError, clientEventId: string | null): void {
    this.send(errorEvent(error, clientEventId));
    // A full buffer is the client's flow, not a bad event: the append is dropped, as documented, and that is all.
    if (error.code === 'input_audio_buffer_full') return;
    if (++this.badEvents >= MAX_BAD_EVENTS) this.fail('too_many_invalid_events', `${MAX_BAD_EVENTS} invalid events in a row: session closed.`);
  }

  private async receive(data: Buffer, isBinary: boolean): Promise<void> {
    // Once the close has begun, a client that goes on sending gets nothing transcribed or charged.
    if (this.closed || this.ws.readyState !== this.ws.OPEN) return;
    this.touch();
    if (isBinary) return this.refuse(invalid('invalid_event', 'Events are JSON text messages; audio goes base64-encoded in input_audio_buffer.append.'), null);
    let event: unknown;
    try {
      event = JSON.parse(data.toString('utf8'));
    } catch {
      return this.refuse(invalid('invalid_json', 'The event is not valid JSON.'), null);
    }
    if (typeof event !== 'object' || event === null || Array.isArray(event) || typeof (event as { type?: unknown }).type !== 'string') {
      return this.refuse(invalid('invalid_event', 'An event is a JSON object with a string "type".', 'type'), null);
    }
    const e = event as Record<string, unknown>;
    const clientEventId = typeof e.event_id === 'string' ? e.event_id : null;
    const problem = await this.handle(e);
    if (problem) return this.refuse(problem, clientEventId);
    this.badEvents = 0;
  }

  /** Handles one client event; returns the error to answer with, if any. */
  private async handle(e: Record<string, unknown>): Promise<EventError | null> {
    const type = e.type as string;
    if (type in SESSION_UPDATE) return this.update(e);
    switch (type) {
      case 'input_audio_buffer.append':
        return this.append(e.audio);
      case 'input_audio_buffer.commit':
        return this.commit();
      case 'input_audio_buffer.clear':
        this.held.clear();
        this.dropHeard();
        this.vad?.forget(this.held.end);
        this.send(cleared());
        return null;
      default:
        return invalid('unknown_event', `"${type}" is not an event this server takes: session.update, transcription_session.update, input_audio_buffer.append, .commit and .clear.`, 'type');
    }
  }

  private async update(e: Record<string, unknown>): Promise<EventError | null> {
    const parsed = parseSessionUpdate(e, this.settings, (await this.parts.stt.route()).target, this.parts.vadModelPath !== null);
    if (!('settings' in parsed)) return parsed;
    if (JSON.stringify(parsed.settings.turnDetection) !== JSON.stringify(this.settings.turnDetection)) {
      const problem = this.listen(parsed.settings.turnDetection);
      if (problem) return problem;
    }
    this.settings = parsed.settings;
    this.dialect = parsed.dialect;
    this.send(sessionEvent(this.dialect, 'updated', this.id, this.settings));
    return null;
  }

  /**
   * Starts (or stops) listening for turns with `settings`, from the next
   * sample on; a turn being heard is dropped with the old listener. A model
   * that will not load leaves the old listener and says so.
   */
  private listen(settings: ServerVadSettings | null): EventError | null {
    // The model stays loaded, also while server_vad is off: loading it again on
    // every update would let a client stall the event loop with a burst of them.
    const loaded = this.vad ?? this.spareVad;
    if (settings && loaded) {
      loaded.retune(settings, this.held.end);
      this.vad = loaded;
      this.spareVad = null;
      this.dropHeard();
      return null;
    }
    if (!settings && this.vad) {
      this.spareVad = this.vad;
      this.vad = null;
      this.dropHeard();
      return null;
    }
    let next: ServerVad | null = null;
    if (settings && this.parts.vadModelPath) {
      try {
        next = new ServerVad(this.parts.vadModelPath, settings, this.held.end);
      } catch (err) {
        this.parts.logger.error({ session: this.id, err: (err as Error).message }, 'the VAD model did not load: server_vad unavailable');
        return { type: 'server_error', code: 'vad_unavailable', message: 'The VAD model server_vad listens with could not be loaded here; send turn_detection: null and commit each turn.', param: null };
      }
    }
    this.vad?.free();
    this.vad = next;
    this.dropHeard();
    return null;
  }

  private async append(audio: unknown): Promise<EventError | null> {
    if (typeof audio !== 'string' || audio.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(audio)) {
      return invalid('invalid_value', 'audio must be base64-encoded 16-bit little-endian PCM.', 'audio');
    }
    const bytes = Buffer.from(audio, 'base64');
    if (bytes.length % 2 !== 0) return invalid('invalid_value', 'audio must hold whole 16-bit samples (an even number of bytes).', 'audio');
    const pcm = new Int16Array(bytes.length / 2);
    for (let i = 0; i < pcm.length; i++) pcm[i] = bytes.readInt16LE(2 * i);
    const limit = this.parts.limits.maxBufferSeconds;
    if (this.held.seconds + pcm.length / INPUT_RATE > limit) {
      // Heard speech that runs past the limit is cut into turns there; a client's own buffer must be committed.
      if (!this.speech || pcm.length / INPUT_RATE > limit) {
        return invalid('input_audio_buffer_full', `The input audio buffer holds at most ${limit} s: commit or clear it. This append was dropped.`, 'audio');
      }
      const at = this.held.end;
      this.endSpeech(at, 'buffer_limit');
      this.startHearing(at);
    }
    this.held.append(pcm);
    const vad = this.vad;
    if (!vad) return null;
    const heard = await vad.hear(pcm).then((edges) => ({ edges }), (err: unknown) => ({ err }));
    // Closed, or another listener set, while Silero listened: its edges are no one's now, and its failure
    // (it was freed while it listened) is no failure: there is nobody to tell.
    if (this.closed || this.vad !== vad) return null;
    if ('err' in heard) throw heard.err;
    for (const edge of heard.edges) {
      if (edge.type === 'started') {
        this.startHearing(Math.max(this.held.start, edge.at - paddingSamples(vad.settings.prefix_padding_ms)));
      } else if (this.speech) {
        this.endSpeech(edge.at, 'server_vad');
      }
    }
    // Silence before speech is kept only as far back as the prefix padding reaches.
    if (!this.speech) this.held.dropBefore(this.held.end - paddingSamples(vad.settings.prefix_padding_ms));
    else this.maybeDraft(this.speech);
    return null;
  }

  private commit(): EventError | null {
    if (this.ending) return { type: 'server_error', code: 'shutting_down', message: 'The server is shutting down: this turn was not taken.', param: null };
    const seconds = this.held.seconds;
    if (seconds < MIN_COMMIT_SECONDS) {
      return invalid('input_audio_buffer_commit_empty',
        `buffer too small. Expected at least ${MIN_COMMIT_SECONDS * 1000}ms of audio, but buffer only has ${(seconds * 1000).toFixed(2)}ms of audio.`);
    }
    const heard = this.speech;
    this.stopHearing();
    // Speech that goes on after the commit is heard afresh, as a new turn.
    this.vad?.forget(this.held.end);
    this.commitTurn(heard?.itemId ?? newId('item'), heard, this.held.start, this.held.end, 'commit');
    return null;
  }

  /** Speech starts at `from`: a new turn is heard. */
  private startHearing(from: number): void {
    this.speech = { itemId: newId('item'), from, draftedTo: from, shownTo: from, words: new AgreedWords() };
    this.send(speechStarted(this.speech.itemId, toMs(from)));
  }

  /** No turn is heard any more (it ended, or was dropped): its draft, if one is being decoded, is not needed. */
  private stopHearing(): void {
    this.speech = null;
    this.drafting?.abort();
    this.drafting = null;
  }

  /**
   * The turn being heard is dropped (clear, a new listener, the socket
   * closed): not transcribed, but what its deltas showed is charged, or
   * dropping a turn would be a way to transcribe for free.
   */
  private dropHeard(): void {
    const heard = this.speech;
    this.stopHearing();
    if (heard?.words.shown) this.parts.keyLimiter.recordShownTurn(this.key, shownSeconds(heard), false);
  }

  /** The turn being heard ends at `at`: `speech_stopped`, then committed. */
  private endSpeech(at: number, by: TurnEnd): void {
    const heard = this.speech!;
    this.stopHearing();
    this.send(speechStopped(heard.itemId, toMs(at)));
    this.commitTurn(heard.itemId, heard, heard.from, at, by);
  }

  /**
   * Drafts the turn being heard once DRAFT_EVERY_SECONDS of audio came since
   * its last draft, while it is at most DRAFT_MAX_SECONDS long, if nothing
   * else would wait for it: no draft running, no turn of this session
   * waiting, a slot free with no job queued or paused (the engine also
   * aborts a running draft when any other job arrives), and the key's budget
   * able to hold the longest turn.
   */
  private maybeDraft(turn: HeardTurn): void {
    if (!this.parts.drafts || this.drafting || this.waitingTurns > 0 || this.ending) return;
    if (this.held.end - turn.draftedTo < DRAFT_EVERY_SECONDS * INPUT_RATE) return;
    if (this.held.end - turn.from > DRAFT_MAX_SECONDS * INPUT_RATE) return;
    if (!this.parts.stt.local.hasIdleSlot()) return;
    const abort = new AbortController();
    this.drafting = abort;
    turn.draftedTo = this.held.end;
    void this.draft(turn, turn.draftedTo, abort.signal).finally(() => {
      if (this.drafting === abort) this.drafting = null;
    });
  }

  private async draft(turn: HeardTurn, to: number, signal: AbortSignal): Promise<void> {
    try {
      if ((await this.parts.stt.route()).target.mode !== 'local') return;
      // A draft is transcription too: a key revoked meanwhile gets none (a client clearing every turn before it
      // ends would otherwise be served deltas for ever), and new limits apply to it.
      if (!(await this.keyStillValidOrClose())) return;
      if (!(await this.parts.keyLimiter.liveSecondsFit(this.key, this.parts.limits.maxBufferSeconds))) return;
      // Checked again after the waits, right where the job is submitted (no await between): another session may have taken the slot.
      if (signal.aborted || this.speech !== turn || !this.parts.stt.local.hasIdleSlot()) return;
      const pcm = this.held.copy(turn.from, to);
      const settings = this.settings;
      const out = await this.parts.stt.transcribe({
        task: 'transcribe', wav: null, pcm, durationSeconds: pcm.length / MODEL_RATE, signal: AbortSignal.any([signal, this.abort.signal]),
        owner: this.key.id, filename: 'audio.wav', format: 'json', language: settings.language ?? turn.language, prompt: settings.prompt ?? undefined,
        granularities: new Set(), cloud: null, draft: true,
      });
      this.parts.drafted();
      // The turn ended while it was drafted: its own transcription speaks for it now.
      if (this.speech !== turn || this.closed) return;
      turn.language ??= languageCode(out.result.language);
      const delta = turn.words.draft(out.result.text);
      if (!delta) return;
      turn.shownTo = to;
      this.send(transcriptDelta(turn.itemId, delta));
    } catch (err) {
      // A draft is only a preview: one that failed or was cut short is skipped, and the turn's own transcription still runs.
      if (!signal.aborted && !this.closed) this.parts.logger.debug({ session: this.id, err: (err as Error).message }, 'realtime draft skipped');
    }
  }

  /**
   * Takes the held audio from `from` to `to` as turn `itemId` (`heard`: the
   * turn Silero heard, with its drafts; null for a commit of unheard audio):
   * committed now, transcribed after the turns before it.
   */
  private commitTurn(itemId: string, heard: HeardTurn | null, from: number, to: number, endedBy: TurnEnd): void {
    this.parts.turnsEnded(endedBy);
    const seconds = (Math.min(to, this.held.end) - Math.max(from, this.held.start)) / INPUT_RATE;
    const pcm = this.held.take(from, to);
    this.send(committed(itemId, this.lastItemId));
    this.send(itemCreated(itemId, this.lastItemId));
    this.lastItemId = itemId;
    const settings = this.settings;
    this.waitingTurns++;
    this.applyPause();
    const shown = { words: heard?.words ?? new AgreedWords(), seconds: heard?.words.shown ? shownSeconds(heard) : 0 };
    this.turns = this.turns.then(() => this.transcribe(itemId, shown, pcm, seconds, settings)).finally(() => {
      this.waitingTurns--;
      this.applyPause();
      // The client's silence while its turn was transcribed is not idleness.
      if (!this.closed) this.touch();
    });
  }

  /**
   * Transcribes a committed turn. `shown`: its drafts' words and the audio
   * they covered, which is charged whatever becomes of the turn (refused,
   * failed before it started, or the session closed first).
   */
  private async transcribe(itemId: string, shown: { words: AgreedWords; seconds: number }, pcm: Float32Array, seconds: number, settings: SessionSettings): Promise<void> {
    const { words } = shown;
    if (this.closed) {
      if (shown.seconds > 0) this.parts.keyLimiter.recordShownTurn(this.key, shown.seconds, true);
      return;
    }
    if (!(await this.keyStillValidOrClose())) {
      if (shown.seconds > 0) this.parts.keyLimiter.recordShownTurn(this.key, shown.seconds, true);
      return;
    }
    let started = false;
    let turn: { end(seconds: number, error: boolean): void } | null = null;
    try {
      if ((await this.parts.stt.route()).target.mode !== 'local') {
        throw new ApiError(409, 'realtime_unavailable', 'Realtime sessions run on the local runtime, and this server now sends transcriptions to a cloud provider.');
      }
      turn = await this.parts.keyLimiter.admitLiveTurn(this.key, seconds);
      const out = await this.parts.stt.transcribe({
        task: 'transcribe', wav: null, pcm, durationSeconds: seconds, signal: this.abort.signal, owner: this.key.id,
        filename: 'audio.wav', format: 'json', language: settings.language ?? undefined, prompt: settings.prompt ?? undefined,
        granularities: new Set(), cloud: null, onStart: () => { started = true; },
      });
      const text = out.result.text.trim();
      turn.end(seconds, false);
      const rest = words.finish(text);
      if (!words.agreed) this.parts.draftsRevised();
      if (rest) this.send(transcriptDelta(itemId, rest));
      this.send(transcriptCompleted(itemId, text, seconds));
    } catch (err) {
      if (turn) turn.end(started ? seconds : shown.seconds, true);
      else if (shown.seconds > 0) this.parts.keyLimiter.recordShownTurn(this.key, shown.seconds, true);
      if (this.closed) return;
      const { error, internal } = eventErrorOf(err);
      if (internal) this.parts.logger.error({ session: this.id, err: (err as Error).message }, 'realtime turn failed');
      this.send(transcriptFailed(itemId, error));
    }
  }

  private dispose(): void {
    if (this.closed) return;
    this.closed = true;
    this.abort.abort();
    this.dropHeard();
    this.held.clear();
    this.vad?.free();
    this.vad = null;
    this.spareVad?.free();
    this.spareVad = null;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    clearTimeout(this.lifeTimer);
  }
}
