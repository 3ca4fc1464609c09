// Where a turn starts and ends, from Silero's speech probability per 32-ms
// frame: OpenAI's `server_vad` turn detection. Speech starts at the first
// frame at or over the threshold; it stops once `silence_duration_ms` of
// frames in a row fall below the threshold less 0.15 (Silero's own
// hysteresis, so a voice hovering at the threshold does not flap). Pure
// bookkeeping over frame indices: server-vad.ts feeds it and keeps time.

/** The session's `turn_detection` of type `server_vad`, OpenAI's fields and defaults. */
export interface ServerVadSettings {
  type: 'server_vad';
  threshold: number;
  prefix_padding_ms: number;
  silence_duration_ms: number;
}

export const SERVER_VAD_DEFAULTS: ServerVadSettings = { type: 'server_vad', threshold: 0.5, prefix_padding_ms: 300, silence_duration_ms: 500 };

/** A turn boundary, at a frame index counted from the first frame fed. */
export type TurnEdge = { type: 'started'; frame: number } | { type: 'stopped'; frame: number };

const HYSTERESIS = 0.15;

export class TurnDetector {
  private speaking = false;
  private silentFrames = 0;
  private nextFrame = 0;
  private readonly silenceFrames: number;

  constructor(private readonly settings: ServerVadSettings, frameMs: number) {
    this.silenceFrames = Math.max(1, Math.ceil(settings.silence_duration_ms / frameMs));
  }

  get inSpeech(): boolean {
    return this.speaking;
  }

  /** The edges in the next frames' probabilities; a `stopped` edge is at the end of the silence that ended the turn. */
  feed(probabilities: ArrayLike<number>): TurnEdge[] {
    const edges: TurnEdge[] = [];
    for (let i = 0; i < probabilities.length; i++, this.nextFrame++) {
      const p = probabilities[i];
      if (!this.speaking) {
        if (p >= this.settings.threshold) {
          this.speaking = true;
          this.silentFrames = 0;
          edges.push({ type: 'started', frame: this.nextFrame });
        }
      } else if (p < this.settings.threshold - HYSTERESIS) {
        if (++this.silentFrames >= this.silenceFrames) {
          this.speaking = false;
          edges.push({ type: 'stopped', frame: this.nextFrame + 1 });
        }
      } else if (p >= this.settings.threshold) {
        this.silentFrames = 0;
      }
    }
    return edges;
  }

  /** The buffer was committed or cleared by the client: the next speech is a new turn. */
  restart(): void {
    this.speaking = false;
    this.silentFrames = 0;
  }
}
