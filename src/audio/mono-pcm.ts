// Collects decoded audio as 16-kHz mono float samples: channels averaged as
// they arrive, held in chunks, joined once at the end, and refused as soon as
// they pass the longest duration allowed (so memory never exceeds what that
// duration costs, whatever the compression ratio).
import { WavError } from '../native/addon-errors';

export const OUTPUT_RATE = 16000;

/** Averages `channels` (each `count` samples long) into one new array. */
export function downmix(channels: Float32Array[], count: number): Float32Array {
  if (channels.length === 1) return channels[0].slice(0, count);
  const mono = new Float32Array(count);
  for (const channel of channels) for (let i = 0; i < count; i++) mono[i] += channel[i];
  for (let i = 0; i < count; i++) mono[i] /= channels.length;
  return mono;
}

export class MonoPcm {
  private chunks: Float32Array[] = [];
  private total = 0;

  /** `what` names the stream in errors ("ogg/opus"); `maxSamples` is the limit at `rate`. */
  constructor(
    private readonly what: string,
    private readonly maxSeconds: number,
    private readonly rate = OUTPUT_RATE,
  ) {}

  get samples(): number {
    return this.total;
  }

  push(channels: Float32Array[], count: number): void {
    if (count <= 0) return;
    if (this.total + count > this.maxSeconds * this.rate) {
      throw new WavError(`${this.what}: longer than ${Math.ceil(this.maxSeconds)} s`, 'audio_too_long');
    }
    this.chunks.push(downmix(channels, count));
    this.total += count;
  }

  /** The samples, the first `keep` of them if given (a container's stated end). */
  join(keep = Infinity): Float32Array {
    const out = new Float32Array(Math.min(this.total, keep));
    let at = 0;
    for (const chunk of this.chunks) {
      if (at >= out.length) break;
      const part = chunk.subarray(0, out.length - at);
      out.set(part, at);
      at += part.length;
    }
    this.chunks = [];
    return out;
  }
}
