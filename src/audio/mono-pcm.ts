// Collects decoded audio as 16-kHz mono float samples: channels averaged as
// they arrive, held in 1-second blocks, joined once at the end, and refused as soon as
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

/** Samples are kept in blocks of this many (1 s at 16 kHz), not one array per packet, whatever the packets' size. */
const BLOCK = OUTPUT_RATE;

export class MonoPcm {
  private blocks: Float32Array[] = [];
  private total = 0;

  /** `what` names the stream in errors ("ogg/opus"). */
  constructor(
    private readonly what: string,
    private readonly maxSeconds: number,
  ) {}

  get samples(): number {
    return this.total;
  }

  /** Adds `count` samples of `channels`, averaged. */
  push(channels: Float32Array[], count: number): void {
    if (count <= 0) return;
    if (this.total + count > this.maxSeconds * OUTPUT_RATE) {
      throw new WavError(`${this.what}: longer than ${Math.ceil(this.maxSeconds)} s`, 'audio_too_long');
    }
    const mono = downmix(channels, count);
    for (let i = 0; i < count; i++) {
      const at = this.total + i;
      if (at % BLOCK === 0 && at / BLOCK === this.blocks.length) this.blocks.push(new Float32Array(BLOCK));
      this.blocks[Math.floor(at / BLOCK)][at % BLOCK] = mono[i];
    }
    this.total += count;
  }

  /** The samples, the first `keep` of them if given (a container's stated end). */
  join(keep = Infinity): Float32Array {
    const out = new Float32Array(Math.min(this.total, keep));
    for (let b = 0; b * BLOCK < out.length; b++) out.set(this.blocks[b].subarray(0, Math.min(BLOCK, out.length - b * BLOCK)), b * BLOCK);
    this.blocks = [];
    return out;
  }
}
