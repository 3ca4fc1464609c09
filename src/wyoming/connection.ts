// One Wyoming client (Home Assistant's voice pipeline, or any peer of the
// wyoming package) on a TCP connection: `describe` is answered with `info`;
// `transcribe` sets the language for the audio that follows;
// `audio-start`, `audio-chunk`s and `audio-stop` carry one utterance, which
// is resampled to 16 kHz as it arrives and transcribed on the local runtime
// at `audio-stop`, answered with `transcript`. Events are handled one after
// another; while an utterance is transcribed the socket is not read (TCP
// holds the client back). Any problem is an `error` event and the end of the
// connection: Home Assistant reads nothing but a transcript or the end of
// the stream, so an open connection after an error would leave it waiting.
// Bounded: utterances (length and wall-clock time), unsent output, idle time
// without an utterance's audio. Wyoming has no authentication: who may connect is the
// listening address's business (server.ts).
import type net from 'node:net';
import { createResampler, type Resampler } from '../native';
import type { Backends } from '../stt/backends';
import { honours } from '../stt/capabilities';
import { languageCode } from '../stt/languages';
import { knownApiError } from '../http/error-map';
import type { Logger } from '../log';
import { encodeEvent, EventReader, FramingError, type WyomingEvent } from './protocol';
import { infoEvent } from './info';

/** Sample rates an utterance may come in (the resampler's filter grows with an odd rate's ratio to 16 kHz). */
const RATES = new Set([8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000]);
const MODEL_RATE = 16_000;
/** The fair queue's owner for Wyoming work: one, since Wyoming carries no key. */
const OWNER = 'wyoming';
/** Longest utterance, whatever STT_MAX_AUDIO_SECONDS allows uploads: voice commands are seconds long, and no key pays for these. */
export const MAX_UTTERANCE_SECONDS = 300;
/** Wall-clock time an utterance may stay open beyond its own length (a client trickling audio to hold the connection). */
const UTTERANCE_SLACK_MS = 30_000;
/**
 * Events that keep a connection from going idle: an utterance's audio and its
 * end (within the utterance's own deadline). A ping, a describe, a transcribe
 * or a bare audio-start does not, or a client repeating one every few seconds
 * could hold one of the server's few connections for ever without using it.
 */
const WORK_EVENTS = new Set(['audio-chunk', 'audio-stop']);
/** Output not yet taken by the client past which it is not reading: the connection is cut. */
const MAX_UNSENT_BYTES = 256 * 1024;

export interface ConnectionParts {
  stt: Backends;
  logger: Logger;
  /** Longest utterance, in seconds (STT_MAX_AUDIO_SECONDS, at most MAX_UTTERANCE_SECONDS). */
  maxAudioSeconds: number;
  /** No event toward an utterance for this long, and nothing being transcribed: the connection is closed. */
  idleMs: number;
  /** Wall-clock time an utterance may stay open beyond its own length (UTTERANCE_SLACK_MS; shorter in tests). */
  utteranceSlackMs?: number;
  /** Counts an utterance by how it ended (stt_wyoming_transcripts_total). */
  counted(outcome: 'transcribed' | 'refused' | 'failed'): void;
}

interface Utterance {
  rate: number;
  channels: number;
  resampler: Resampler;
  /** Input frames so far. */
  frames: number;
  /** Drops the utterance when it stays open too long (null while it is handed to a replacing one). */
  deadline: NodeJS.Timeout | null;
}

class AudioProblem extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

export class WyomingConnection {
  private readonly reader = new EventReader();
  private queue: Promise<void> = Promise.resolve();
  private language: string | undefined;
  private utterance: Utterance | null = null;
  private busy = false;
  private closed = false;
  /** Shutting down: the utterance being transcribed is answered, then the connection ends. */
  private ending = false;
  private readonly abort = new AbortController();
  private idleTimer: NodeJS.Timeout | null = null;

  /** `socket` is half-open capable: a client that ends its side after audio-stop still gets its transcript. */
  constructor(private readonly socket: net.Socket, private readonly parts: ConnectionParts) {
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('end', () => void this.queue.then(() => this.finish()));
    socket.on('close', () => this.dispose());
    socket.on('error', (err) => parts.logger.debug({ err: err.message }, 'wyoming socket error'));
    this.touch();
  }

  /** Shutdown: answers the utterance being transcribed, if any, then ends the connection. */
  end(): Promise<void> {
    this.ending = true;
    return this.queue.then(() => this.finish());
  }

  /** Ends the connection once what was written is flushed, without waiting for the client's side. */
  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.end(() => this.socket.destroy());
  }

  /** An `error` event, then the end of the connection. */
  private fail(code: string, text: string): void {
    this.send('error', { text, code });
    this.finish();
  }

  /** Restarts the idle clock (complete events toward an utterance, not bytes, count: a trickle of bytes, or of pings, is idle). */
  private touch(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.busy) return this.touch();
      this.parts.logger.debug('wyoming connection idle: closed');
      this.socket.destroy();
    }, this.parts.idleMs);
    this.idleTimer.unref();
  }

  private receive(chunk: Buffer): void {
    if (this.closed || this.ending) return;
    let events: WyomingEvent[];
    try {
      events = this.reader.push(chunk);
    } catch (err) {
      const e = err as FramingError;
      this.parts.logger.info({ code: e.code }, 'wyoming client sent a bad frame: connection closed');
      return this.fail(e.code, e.message);
    }
    if (events.some((e) => WORK_EVENTS.has(e.type))) this.touch();
    for (const event of events) {
      this.queue = this.queue.then(() => this.handle(event)).catch((err: Error) => {
        this.parts.logger.error({ err: err.message }, 'wyoming event failed');
        this.fail('internal_error', 'Internal server error.');
      });
    }
  }

  private async handle(event: WyomingEvent): Promise<void> {
    if (this.closed || this.ending) return;
    switch (event.type) {
      case 'describe':
        return this.send('info', await infoEvent(this.parts.stt));
      case 'ping':
        return this.send('pong', typeof event.data.text === 'string' ? { text: event.data.text } : {});
      case 'transcribe': {
        const language = event.data.language;
        this.language = typeof language === 'string' && language.trim() ? language.trim().toLowerCase().split(/[-_]/)[0] : undefined;
        return;
      }
      case 'audio-start':
        return this.guarded(() => this.startUtterance(event.data));
      case 'audio-chunk':
        return this.guarded(() => this.appendChunk(event.data, event.payload));
      case 'audio-stop':
        return this.guarded(() => this.finishUtterance());
      default:
        // Wyoming's own servers pass over events they do not handle (a peer may speak more of the protocol than STT).
        return;
    }
  }

  /** Runs `step`; an AudioProblem drops the utterance, is told to the client, and ends the connection. */
  private async guarded(step: () => void | Promise<void>): Promise<void> {
    try {
      await step();
    } catch (err) {
      if (!(err instanceof AudioProblem)) throw err;
      this.dropUtterance();
      this.parts.counted('refused');
      this.fail(err.code, err.message);
    }
  }

  private get slackMs(): number {
    return this.parts.utteranceSlackMs ?? UTTERANCE_SLACK_MS;
  }

  private get maxSeconds(): number {
    return Math.min(this.parts.maxAudioSeconds, MAX_UTTERANCE_SECONDS);
  }

  private startUtterance(data: Record<string, unknown>): void {
    const { rate, channels } = formatOf(data);
    // An audio-start over an open utterance replaces it but keeps its deadline: restarting
    // again and again is no way to hold the connection without ever finishing one.
    const kept = this.utterance?.deadline ?? null;
    if (this.utterance) this.utterance.deadline = null;
    this.dropUtterance();
    const deadline = kept ?? setTimeout(() => {
      this.dropUtterance();
      this.parts.counted('refused');
      this.fail('utterance_timeout', `An utterance must end (audio-stop) within ${this.maxSeconds} s of audio plus ${this.slackMs / 1000} s.`);
    }, this.maxSeconds * 1000 + this.slackMs);
    deadline.unref();
    this.utterance = { rate, channels, resampler: createResampler(rate), frames: 0, deadline };
  }

  private appendChunk(data: Record<string, unknown>, payload: Buffer | null): void {
    const u = this.utterance;
    if (!u) throw new AudioProblem('audio_not_started', 'audio-chunk before audio-start: send audio-start with rate, width and channels first.');
    const { rate, channels } = formatOf(data);
    if (rate !== u.rate || channels !== u.channels) {
      throw new AudioProblem('audio_format_changed', `audio-chunk is ${rate} Hz, ${channels} channel(s); audio-start said ${u.rate} Hz, ${u.channels}.`);
    }
    if (!payload) return;
    if (payload.length % (2 * channels) !== 0) throw new AudioProblem('invalid_audio', 'audio-chunk must hold whole 16-bit frames.');
    const frames = payload.length / (2 * channels);
    if ((u.frames + frames) / rate > this.maxSeconds) {
      throw new AudioProblem('audio_too_long', `An utterance is at most ${this.maxSeconds} s here: this one was dropped.`);
    }
    const mono = new Float32Array(frames);
    for (let i = 0; i < frames; i++) {
      let sum = 0;
      for (let c = 0; c < channels; c++) sum += payload.readInt16LE(2 * (i * channels + c));
      mono[i] = sum / channels / 32768;
    }
    u.resampler.push(mono);
    u.frames += frames;
  }

  private async finishUtterance(): Promise<void> {
    const u = this.utterance;
    if (!u) throw new AudioProblem('audio_not_started', 'audio-stop before audio-start.');
    this.utterance = null;
    if (u.deadline) clearTimeout(u.deadline);
    const pcm = u.resampler.finish();
    const seconds = u.frames / u.rate;
    this.busy = true;
    this.socket.pause();
    const started = performance.now();
    try {
      const route = await this.parts.stt.route();
      if (route.target.mode !== 'local') {
        throw new AudioProblem('local_runtime_unavailable', 'Wyoming runs on the local runtime, and this server now sends transcriptions to a cloud provider.');
      }
      if (this.language && !honours.language(route.target, this.language)) {
        throw new AudioProblem('unsupported_language', `The language "${this.language}" is not supported by the active model.`);
      }
      const out = await this.parts.stt.transcribe({
        task: 'transcribe', wav: null, pcm, durationSeconds: pcm.length / MODEL_RATE, signal: this.abort.signal, owner: OWNER,
        filename: 'audio.wav', format: 'json', language: this.language, granularities: new Set(), cloud: null,
      });
      const text = out.result.text.trim();
      this.parts.counted('transcribed');
      this.parts.logger.info({ audioSeconds: Number(seconds.toFixed(2)), ms: Math.round(performance.now() - started) }, 'wyoming transcript');
      const language = this.language ?? languageCode(out.result.language);
      this.send('transcript', { text, ...(language ? { language } : {}) });
    } catch (err) {
      if (err instanceof AudioProblem) throw err;
      if (this.closed) return;
      const known = knownApiError(err);
      if (!known) this.parts.logger.error({ err: (err as Error).message }, 'wyoming transcription failed');
      this.parts.counted('failed');
      if (known) this.fail(known.code, known.message);
      else this.fail('internal_error', 'Internal server error.');
    } finally {
      this.busy = false;
      // The idle time counts from the answer: the clock may have run out while the engine worked, and closing
      // now could cut the transcript before the client has read it.
      if (!this.closed) this.touch();
      if (!this.closed && !this.ending) this.socket.resume();
    }
  }

  private dropUtterance(): void {
    if (!this.utterance) return;
    if (this.utterance.deadline) clearTimeout(this.utterance.deadline);
    this.utterance.resampler.free();
    this.utterance = null;
  }

  private send(type: string, data?: Record<string, unknown>): void {
    if (this.closed || this.socket.destroyed || !this.socket.writable) return;
    this.socket.write(encodeEvent(type, data));
    if (this.socket.writableLength > MAX_UNSENT_BYTES) {
      this.parts.logger.info('wyoming client stopped reading: connection cut');
      this.socket.destroy();
    }
  }

  private dispose(): void {
    this.closed = true;
    this.abort.abort();
    this.dropUtterance();
    if (this.idleTimer) clearTimeout(this.idleTimer);
  }
}

/** An audio event's format: 16-bit PCM at a known rate, mono or stereo. */
function formatOf(data: Record<string, unknown>): { rate: number; channels: number } {
  const { rate, width, channels } = data;
  if (typeof rate !== 'number' || !RATES.has(rate)) {
    throw new AudioProblem('unsupported_audio_format', `rate must be one of ${[...RATES].join(', ')} Hz; got ${JSON.stringify(rate ?? null)}.`);
  }
  if (width !== 2) throw new AudioProblem('unsupported_audio_format', `width must be 2 (16-bit samples); got ${JSON.stringify(width ?? null)}.`);
  if (channels !== 1 && channels !== 2) throw new AudioProblem('unsupported_audio_format', `channels must be 1 or 2; got ${JSON.stringify(channels ?? null)}.`);
  return { rate, channels };
}
