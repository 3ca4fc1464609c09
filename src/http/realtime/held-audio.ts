// The audio a realtime session holds and has not committed: 24-kHz PCM16
// pieces in the order they were appended, placed on the session's timeline
// (samples since the session began), so a turn can be cut out by position
// (server VAD) or taken whole (a client's commit), and audio nobody will
// need (silence before speech, past the prefix padding) let go.
import { createResampler } from '../../native';
import { INPUT_RATE } from './events';

interface Piece {
  at: number;
  pcm: Int16Array;
}

export class HeldAudio {
  private pieces: Piece[] = [];
  /** Timeline position of the first sample held (everything before was taken or dropped). */
  private first = 0;
  /** Timeline position just past the last sample appended. */
  private last = 0;

  get start(): number {
    return this.first;
  }

  get end(): number {
    return this.last;
  }

  get seconds(): number {
    return (this.last - this.first) / INPUT_RATE;
  }

  append(pcm: Int16Array): void {
    if (pcm.length === 0) return;
    this.pieces.push({ at: this.last, pcm });
    this.last += pcm.length;
  }

  /** Lets go of everything before `position`. */
  dropBefore(position: number): void {
    wholeSample(position);
    const to = Math.min(Math.max(position, this.first), this.last);
    while (this.pieces.length && this.pieces[0].at + this.pieces[0].pcm.length <= to) this.pieces.shift();
    const head = this.pieces[0];
    if (head && head.at < to) this.pieces[0] = { at: to, pcm: head.pcm.subarray(to - head.at) };
    this.first = to;
  }

  /** The audio from `from` to `to` (clamped to what is held) at 16 kHz; everything before `to` is let go. */
  take(from: number, to: number): Float32Array {
    const pcm = this.copy(from, to);
    this.dropBefore(to);
    return pcm;
  }

  /** The audio from `from` to `to` (clamped to what is held) at 16 kHz, left held. */
  copy(from: number, to: number): Float32Array {
    wholeSample(from);
    wholeSample(to);
    const start = Math.max(from, this.first);
    const stop = Math.min(to, this.last);
    const resampler = createResampler(INPUT_RATE);
    for (const piece of this.pieces) {
      const a = Math.max(start, piece.at) - piece.at;
      const b = Math.min(stop, piece.at + piece.pcm.length) - piece.at;
      if (b <= a) continue;
      const part = new Float32Array(b - a);
      for (let i = 0; i < part.length; i++) part[i] = piece.pcm[a + i] / 32768;
      resampler.push(part);
    }
    return resampler.finish();
  }

  clear(): void {
    this.dropBefore(this.last);
  }
}

/** Positions count whole samples: a fractional one would read samples that are not there (NaN) and shift the rest. */
function wholeSample(position: number): void {
  if (!Number.isInteger(position)) throw new RangeError(`audio position ${position} is not a whole sample`);
}
