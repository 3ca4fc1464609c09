// Writes WAV files in every encoding the decoder accepts (and a few it must
// reject), from float samples in -1..1. Independent of the native decoder, so
// tests can compare the two.
export type Encoding = 'pcm_u8' | 'pcm_s16' | 'pcm_s24' | 'pcm_s32' | 'float32' | 'float64' | 'alaw' | 'mulaw';

export interface WavSpec {
  rate: number;
  encoding: Encoding;
  /** Interleaved channels; each array is one channel. */
  channels: Float32Array[];
  extensible?: boolean;
  /** Extra chunks placed before fmt/data: [id, body]. Odd sizes get their pad byte. */
  extraChunks?: [string, Buffer][];
  /** Overrides the declared data size (0 or 0xFFFFFFFF for streamed WAV). */
  dataSizeOverride?: number;
  formatTagOverride?: number;
}

const FORMAT_TAG: Record<Encoding, number> = {
  pcm_u8: 1, pcm_s16: 1, pcm_s24: 1, pcm_s32: 1, float32: 3, float64: 3, alaw: 6, mulaw: 7,
};
const BITS: Record<Encoding, number> = {
  pcm_u8: 8, pcm_s16: 16, pcm_s24: 24, pcm_s32: 32, float32: 32, float64: 64, alaw: 8, mulaw: 8,
};

const clamp = (v: number) => Math.max(-1, Math.min(1, v));

// G.711 encoders (ITU-T reference algorithm on 16-bit input).
export function linearToAlaw(pcm16: number): number {
  let mask: number;
  let pcm = pcm16 >> 3;
  if (pcm >= 0) mask = 0xd5;
  else {
    mask = 0x55;
    pcm = -pcm - 1;
  }
  const segEnd = [0x1f, 0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff];
  let seg = segEnd.findIndex((e) => pcm <= e);
  if (seg < 0) return 0x7f ^ mask;
  let aval = seg << 4;
  aval |= seg < 2 ? (pcm >> 1) & 0xf : (pcm >> seg) & 0xf;
  return aval ^ mask;
}

export function linearToMulaw(pcm16: number): number {
  const BIAS = 0x84;
  let pcm = pcm16 >> 2;
  let mask: number;
  if (pcm < 0) {
    pcm = -pcm;
    mask = 0x7f;
  } else mask = 0xff;
  if (pcm > 8159) pcm = 8159;
  pcm += BIAS >> 2;
  const segEnd = [0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff, 0x1fff];
  const seg = segEnd.findIndex((e) => pcm <= e);
  if (seg < 0) return 0x7f ^ mask;
  const uval = (seg << 4) | ((pcm >> (seg + 1)) & 0xf);
  return uval ^ mask;
}

function writeSample(buf: Buffer, off: number, enc: Encoding, v: number): void {
  const c = clamp(v);
  switch (enc) {
    case 'pcm_u8': buf.writeUInt8(Math.round(c * 127) + 128, off); break;
    case 'pcm_s16': buf.writeInt16LE(Math.round(c * 32767), off); break;
    case 'pcm_s24': buf.writeIntLE(Math.round(c * 8388607), off, 3); break;
    case 'pcm_s32': buf.writeInt32LE(Math.round(c * 2147483647), off); break;
    case 'float32': buf.writeFloatLE(v, off); break;
    case 'float64': buf.writeDoubleLE(v, off); break;
    case 'alaw': buf.writeUInt8(linearToAlaw(Math.round(c * 32767)), off); break;
    case 'mulaw': buf.writeUInt8(linearToMulaw(Math.round(c * 32767)), off); break;
  }
}

function chunk(id: string, body: Buffer, declaredSize = body.length): Buffer {
  const head = Buffer.alloc(8);
  head.write(id, 0, 'latin1');
  head.writeUInt32LE(declaredSize >>> 0, 4);
  return Buffer.concat([head, body, body.length % 2 ? Buffer.alloc(1) : Buffer.alloc(0)]);
}

export function writeWav(spec: WavSpec): Buffer {
  const channels = spec.channels.length;
  const frames = spec.channels[0]?.length ?? 0;
  const bits = BITS[spec.encoding];
  const bytes = bits / 8;
  const tag = spec.formatTagOverride ?? FORMAT_TAG[spec.encoding];
  const fmt = Buffer.alloc(spec.extensible ? 40 : 16);
  fmt.writeUInt16LE(spec.extensible ? 0xfffe : tag, 0);
  fmt.writeUInt16LE(channels, 2);
  fmt.writeUInt32LE(spec.rate, 4);
  fmt.writeUInt32LE(spec.rate * channels * bytes, 8);
  fmt.writeUInt16LE(channels * bytes, 12);
  fmt.writeUInt16LE(bits, 14);
  if (spec.extensible) {
    fmt.writeUInt16LE(22, 16);
    fmt.writeUInt16LE(bits, 18);
    fmt.writeUInt32LE(channels === 1 ? 0x4 : 0x3, 20);
    fmt.writeUInt16LE(tag, 24);
    Buffer.from([0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71]).copy(fmt, 26);
  }
  const data = Buffer.alloc(frames * channels * bytes);
  for (let i = 0; i < frames; i++) {
    for (let c = 0; c < channels; c++) writeSample(data, (i * channels + c) * bytes, spec.encoding, spec.channels[c][i]);
  }
  const body = Buffer.concat([
    Buffer.from('WAVE'),
    ...(spec.extraChunks ?? []).map(([id, b]) => chunk(id, b)),
    chunk('fmt ', fmt),
    chunk('data', data, spec.dataSizeOverride ?? data.length),
  ]);
  const riff = Buffer.alloc(8);
  riff.write('RIFF', 0, 'latin1');
  riff.writeUInt32LE(body.length, 4);
  return Buffer.concat([riff, body]);
}

/** Reads a plain 16-bit mono PCM WAV (the shared corpus) without the native decoder. */
export function readPcm16Mono(buf: Buffer): { rate: number; samples: Float32Array } {
  let pos = 12;
  let rate = 0;
  while (pos + 8 <= buf.length) {
    const id = buf.toString('latin1', pos, pos + 4);
    const size = buf.readUInt32LE(pos + 4);
    if (id === 'fmt ') rate = buf.readUInt32LE(pos + 12);
    if (id === 'data') {
      const n = Math.floor(size / 2);
      const samples = new Float32Array(n);
      for (let i = 0; i < n; i++) samples[i] = buf.readInt16LE(pos + 8 + i * 2) / 32768;
      return { rate, samples };
    }
    pos += 8 + size + (size % 2);
  }
  throw new Error('no data chunk');
}

export function tone(freq: number, rate: number, seconds: number, amplitude = 0.5): Float32Array {
  const n = Math.round(rate * seconds);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = amplitude * Math.sin((2 * Math.PI * freq * i) / rate);
  return out;
}
