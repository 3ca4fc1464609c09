// Server-side turn detection for a realtime session: the session's 24-kHz
// audio, as it arrives, brought to 16 kHz for Silero (which hears 8 or 16 kHz
// only) and judged frame by frame on a pool thread by the addon's VadStream,
// its state carried across appends; the TurnDetector turns probabilities
// into turn edges, returned here as positions on the session's 24-kHz
// timeline. The 16-kHz copy is only for listening: a turn is transcribed
// from the 24-kHz audio it covers, through the proper resampler.
import { createVadStream, VAD_FRAME, type VadStream } from '../../native';
import { TurnDetector, type ServerVadSettings } from './turn-detector';
import { INPUT_RATE } from './events';

/** A turn edge at a sample position on the session's 24-kHz timeline. */
export type VadEdge = { type: 'started' | 'stopped'; at: number };

const EAR_RATE = 16000;
const FRAME_MS = (VAD_FRAME / EAR_RATE) * 1000;
/** Frames judged per call at most, so one large append is not one long pool job. */
const MAX_FRAMES_PER_CALL = 64;

export class ServerVad {
  private readonly stream: VadStream;
  private detector: TurnDetector;
  /** 16-kHz samples not yet a whole frame. */
  private ear = new Float32Array(0);
  /** 24-kHz samples left over from the last append (the 3:2 step takes three at a time), as floats. */
  private carry: number[] = [];

  /**
   * `origin`: the timeline position of the first sample it will hear (a
   * listener started mid-session counts from there). Throws if the model
   * cannot be loaded.
   */
  constructor(modelPath: string, private listening: ServerVadSettings, private origin: number) {
    this.stream = createVadStream(modelPath);
    this.detector = new TurnDetector(listening, FRAME_MS);
  }

  get settings(): ServerVadSettings {
    return this.listening;
  }

  /**
   * Hears the next 24-kHz PCM16 samples (continuing the last call's) and
   * returns the turn edges in them. 3:2 decimation with a two-tap average for
   * the in-between sample: enough for a speech detector, not for transcription.
   */
  async hear(pcm16: Int16Array): Promise<VadEdge[]> {
    const input = new Float32Array(this.carry.length + pcm16.length);
    input.set(this.carry);
    for (let i = 0; i < pcm16.length; i++) input[this.carry.length + i] = pcm16[i] / 32768;
    const steps = Math.floor(input.length / 3);
    this.carry = Array.from(input.subarray(steps * 3));
    const ear = new Float32Array(this.ear.length + steps * 2);
    ear.set(this.ear);
    for (let i = 0, o = this.ear.length; i < steps; i++) {
      ear[o++] = input[3 * i];
      ear[o++] = (input[3 * i + 1] + input[3 * i + 2]) / 2;
    }
    const whole = Math.floor(ear.length / VAD_FRAME) * VAD_FRAME;
    this.ear = ear.slice(whole);
    const edges: VadEdge[] = [];
    for (let at = 0; at < whole; at += MAX_FRAMES_PER_CALL * VAD_FRAME) {
      const piece = ear.subarray(at, Math.min(whole, at + MAX_FRAMES_PER_CALL * VAD_FRAME));
      for (const edge of this.detector.feed(await this.stream.detect(piece))) {
        edges.push({ type: edge.type, at: this.origin + edge.frame * VAD_FRAME * (INPUT_RATE / EAR_RATE) });
      }
    }
    return edges;
  }

  /**
   * The client cleared or committed the buffer: what was heard is forgotten
   * too, so its fading echo in Silero's state starts no turn (speech that goes
   * on is heard afresh within a few frames); the next sample heard is
   * at `origin` (the samples not yet a whole frame are dropped with the rest).
   */
  forget(origin: number): void {
    this.origin = origin;
    this.detector = new TurnDetector(this.listening, FRAME_MS);
    this.stream.reset();
    this.ear = new Float32Array(0);
    this.carry = [];
  }

  /**
   * Listens with other settings from `origin` on, as a new listener would,
   * on the model already loaded: a session.update that only changes the
   * threshold or the pauses costs no model load.
   */
  retune(settings: ServerVadSettings, origin: number): void {
    this.listening = settings;
    this.forget(origin);
  }

  free(): void {
    this.stream.free();
  }
}
