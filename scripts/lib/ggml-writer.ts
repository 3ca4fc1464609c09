// What both model generators share: a seeded RNG, f16 conversion, tensor
// payloads in f32/f16/q8_0/i32, and the legacy ggml tensor record
// (n_dims, name length, type, ne[0..n), name, data) that whisper.cpp and
// parakeet.cpp both read.
import { createWriteStream, renameSync } from 'node:fs';
import { GGML_QNT_VERSION_FACTOR } from '../../src/native/ggml-types';

export const TYPE_F32 = 0;
export const TYPE_F16 = 1;
export const TYPE_Q8_0 = 8;
const FTYPE = { f16: 1, q8_0: 7 } as const;
export type Quant = keyof typeof FTYPE;

/** The header's ftype for a model's weight type; quantised files carry ggml's quantisation version (2) as whisper.cpp's quantize writes it. */
export const fileFtype = (quant: Quant): number => FTYPE[quant] + (quant === 'q8_0' ? 2 * GGML_QNT_VERSION_FACTOR : 0);

/** xorshift32: deterministic, so a model of a given name is always the same file. */
export class Rng {
  constructor(private s: number) {}
  next(): number {
    let x = this.s;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.s = x >>> 0;
    return this.s / 4294967296;
  }
  uniform(scale: number): number {
    return (this.next() * 2 - 1) * scale;
  }
}

/** IEEE half to float (exact). */
export function fromHalf(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 31) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

const halfScratch = new Float32Array(1);
const halfBits = new Uint32Array(halfScratch.buffer);
export function toHalf(v: number): number {
  halfScratch[0] = v;
  const u = halfBits[0];
  const sign = (u >>> 16) & 0x8000;
  const exp = ((u >>> 23) & 0xff) - 127 + 15;
  const mant = u & 0x7fffff;
  if (exp <= 0) return sign;
  if (exp >= 31) return sign | 0x7c00;
  return sign | (exp << 10) | (mant >>> 13);
}

export interface Tensor {
  name: string;
  dims: number[]; // ggml order: ne[0] first
  type: number;
  fill: 'random' | 'ones' | 'zeros';
}

/** Random weights are uniform in ±0.05: small enough that layer norms keep activations finite. */
export function tensorData(t: Tensor, rng: Rng): Buffer {
  const n = t.dims.reduce((a, b) => a * b, 1);
  const value = t.fill === 'ones' ? 1 : 0;
  if (t.type === TYPE_F32) {
    const out = new Float32Array(n);
    for (let i = 0; i < n; i++) out[i] = t.fill === 'random' ? rng.uniform(0.05) : value;
    return Buffer.from(out.buffer);
  }
  if (t.type === TYPE_F16) {
    const out = new Uint16Array(n);
    for (let i = 0; i < n; i++) out[i] = toHalf(t.fill === 'random' ? rng.uniform(0.05) : value);
    return Buffer.from(out.buffer);
  }
  // q8_0: blocks of an f16 scale and 32 signed bytes.
  const blocks = n / 32;
  const out = Buffer.alloc(blocks * 34);
  const scale = toHalf(0.05 / 127);
  for (let b = 0; b < blocks; b++) {
    out.writeUInt16LE(scale, b * 34);
    for (let i = 0; i < 32; i++) out.writeInt8(Math.round(rng.uniform(127)), b * 34 + 2 + i);
  }
  return out;
}

/** A model file written to a temporary name and renamed into place when complete. */
export class ModelWriter {
  private readonly tmp: string;
  private readonly out;

  constructor(private readonly file: string) {
    this.tmp = `${file}.tmp-${process.pid}`;
    this.out = createWriteStream(this.tmp);
  }

  async write(chunk: Buffer): Promise<void> {
    if (!this.out.write(chunk)) await new Promise<void>((resolve) => this.out.once('drain', () => resolve()));
  }

  async tensor(t: Tensor, data: Buffer): Promise<void> {
    const nameBytes = Buffer.from(t.name);
    const rec = Buffer.alloc(12 + 4 * t.dims.length);
    rec.writeInt32LE(t.dims.length, 0);
    rec.writeInt32LE(nameBytes.length, 4);
    rec.writeInt32LE(t.type, 8);
    t.dims.forEach((d, i) => rec.writeInt32LE(d, 12 + 4 * i));
    await this.write(rec);
    await this.write(nameBytes);
    await this.write(data);
  }

  async finish(): Promise<string> {
    await new Promise<void>((resolve, reject) => this.out.end((err?: Error | null) => (err ? reject(err) : resolve())));
    renameSync(this.tmp, this.file);
    return this.file;
  }
}
