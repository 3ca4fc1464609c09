// The WAV front end: every accepted encoding against an independent
// reference, every malformed case's code, and the resampler's filter.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { decodeWav, WavError } from '../../src/native';
import { readPcm16Mono, tone, writeWav, type Encoding, AUDIO_DIR } from '../../fixtures';

const jfk = readPcm16Mono(readFileSync(path.join(AUDIO_DIR, 'jfk.wav')));
const ref = jfk.samples.subarray(0, 16000 * 3); // 3 s keeps the suite quick

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

function snrDb(signal: Float32Array, test: Float32Array): number {
  let s = 0, n = 0;
  for (let i = 0; i < signal.length; i++) {
    s += signal[i] ** 2;
    n += (signal[i] - test[i]) ** 2;
  }
  return 10 * Math.log10(s / n);
}

function rms(x: Float32Array, skip: number): number {
  let sum = 0;
  for (let i = skip; i < x.length - skip; i++) sum += x[i] * x[i];
  return Math.sqrt(sum / (x.length - 2 * skip));
}

async function expectCode(bytes: Buffer, code: string): Promise<void> {
  await assert.rejects(decodeWav(bytes), (err: Error & { code?: string }) => {
    assert.equal(err.code, code, `expected ${code}, got ${err.code}: ${err.message}`);
    assert.ok(err instanceof WavError, `a WavError, not ${err.constructor.name}`);
    return true;
  });
}

// Tolerance per encoding: the quantisation step of the format (plus one step
// for the writer's 32767 vs the reader's 32768 scaling).
const TOLERANCE: Record<Exclude<Encoding, 'alaw' | 'mulaw'>, number> = {
  pcm_u8: 2 / 128, pcm_s16: 2 / 32768, pcm_s24: 2 / 32768, pcm_s32: 2 / 32768, float32: 1e-7, float64: 1e-7,
};

for (const [encoding, tolerance] of Object.entries(TOLERANCE) as [Encoding, number][]) {
  test(`16 kHz ${encoding} decodes to the reference samples within ${tolerance.toExponential(1)}`, async () => {
    const out = await decodeWav(writeWav({ rate: 16000, encoding, channels: [ref] }));
    assert.equal(out.sampleFormat, encoding);
    assert.equal(out.sampleRate, 16000);
    assert.ok(maxAbsDiff(out.pcm, ref) <= tolerance);
  });
}

for (const encoding of ['alaw', 'mulaw'] as const) {
  test(`16 kHz ${encoding} decodes to the reference with SNR >= 30 dB (G.711 companding)`, async () => {
    const out = await decodeWav(writeWav({ rate: 16000, encoding, channels: [ref] }));
    assert.equal(out.sampleFormat, encoding);
    assert.ok(snrDb(ref, out.pcm) >= 30, `SNR ${snrDb(ref, out.pcm).toFixed(1)} dB`);
  });
}

test('WAVE_FORMAT_EXTENSIBLE (PCM and float sub-formats) decodes like the plain tags', async () => {
  for (const encoding of ['pcm_s16', 'pcm_s24', 'float32'] as const) {
    const out = await decodeWav(writeWav({ rate: 16000, encoding, channels: [ref], extensible: true }));
    assert.equal(out.extensible, true);
    assert.ok(maxAbsDiff(out.pcm, ref) <= 2 / 32768, encoding);
  }
});

test('1 to 8 channels are downmixed by averaging', async () => {
  for (const n of [2, 3, 6, 8]) {
    const out = await decodeWav(writeWav({ rate: 16000, encoding: 'float32', channels: Array(n).fill(ref) }));
    assert.equal(out.channels, n);
    assert.ok(maxAbsDiff(out.pcm, ref) <= 1e-6, `${n} channels`);
  }
  const inverted = ref.map((v) => -v);
  const cancel = await decodeWav(writeWav({ rate: 16000, encoding: 'float32', channels: [ref, inverted] }));
  assert.ok(maxAbsDiff(cancel.pcm, new Float32Array(ref.length)) <= 1e-7);
});

test('extra chunks (LIST, fact, odd-sized with padding) are skipped', async () => {
  const bytes = writeWav({
    rate: 16000, encoding: 'pcm_s16', channels: [ref],
    extraChunks: [['LIST', Buffer.from('INFOx')], ['fact', Buffer.alloc(4)], ['junk', Buffer.from('odd')]],
  });
  const out = await decodeWav(bytes);
  assert.ok(maxAbsDiff(out.pcm, ref) <= 2 / 32768);
});

test('a data size of 0 or 0xFFFFFFFF (streamed WAV) reads to the end', async () => {
  for (const size of [0, 0xffffffff]) {
    const out = await decodeWav(writeWav({ rate: 16000, encoding: 'pcm_s16', channels: [ref], dataSizeOverride: size }));
    assert.equal(out.pcm.length, ref.length);
  }
});

test('44.1 and 48 kHz: a 1 kHz tone passes within 0.1 dB, tones above 8 kHz are down at least 60 dB', async () => {
  for (const rate of [44100, 48000]) {
    const pass = await decodeWav(writeWav({ rate, encoding: 'float32', channels: [tone(1000, rate, 1)] }));
    assert.equal(pass.pcm.length, 16000);
    const gainDb = 20 * Math.log10(rms(pass.pcm, 1600) / (0.5 / Math.SQRT2));
    assert.ok(Math.abs(gainDb) <= 0.1, `${rate} Hz: 1 kHz gain ${gainDb.toFixed(3)} dB`);
    for (const f of [8500, 10000, 15000, 20000]) {
      const stop = await decodeWav(writeWav({ rate, encoding: 'float32', channels: [tone(f, rate, 1)] }));
      const attDb = 20 * Math.log10(rms(stop.pcm, 1600) / (0.5 / Math.SQRT2));
      assert.ok(attDb <= -60, `${rate} Hz input, ${f} Hz tone: ${attDb.toFixed(1)} dB`);
    }
  }
});

test('8, 22.05, 96 and 192 kHz inputs resample to 16 kHz and keep a 1 kHz tone', async () => {
  for (const rate of [8000, 22050, 96000, 192000]) {
    const out = await decodeWav(writeWav({ rate, encoding: 'pcm_s16', channels: [tone(1000, rate, 0.5)] }));
    assert.equal(out.pcm.length, 8000);
    assert.equal(out.durationSeconds, 0.5);
    const gainDb = 20 * Math.log10(rms(out.pcm, 800) / (0.5 / Math.SQRT2));
    assert.ok(Math.abs(gainDb) <= 0.1, `${rate}: ${gainDb.toFixed(3)} dB`);
  }
});

test('malformed input gets its stable code', async () => {
  const good = writeWav({ rate: 16000, encoding: 'pcm_s16', channels: [ref.subarray(0, 160)] });
  const patch = (at: number, write: (b: Buffer) => void) => {
    const b = Buffer.from(good);
    write(b.subarray(at));
    return b;
  };
  await expectCode(Buffer.from('this is plain text, not audio'), 'not_riff_wave');
  await expectCode(readFileSync(path.join(AUDIO_DIR, 'pocketsphinx_testdata', 'goforward.raw')), 'not_riff_wave');
  await expectCode(Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('AVI ')]), 'not_riff_wave');
  await expectCode(Buffer.alloc(0), 'truncated_header');
  await expectCode(good.subarray(0, 10), 'truncated_header');
  await expectCode(good.subarray(0, 30), 'truncated_header');
  await expectCode(patch(20, (b) => b.writeUInt16LE(2, 0)), 'unsupported_codec'); // MS ADPCM
  await expectCode(patch(20, (b) => b.writeUInt16LE(0x55, 0)), 'unsupported_codec'); // MP3 in WAV
  await expectCode(patch(34, (b) => b.writeUInt16LE(12, 0)), 'unsupported_codec'); // 12-bit PCM
  await expectCode(patch(22, (b) => b.writeUInt16LE(0, 0)), 'invalid_format'); // zero channels
  await expectCode(patch(24, (b) => b.writeUInt32LE(0, 0)), 'invalid_format'); // zero rate
  await expectCode(patch(22, (b) => b.writeUInt16LE(9, 0)), 'invalid_format'); // 9 channels
  await expectCode(patch(24, (b) => b.writeUInt32LE(4000, 0)), 'unsupported_sample_rate');
  await expectCode(patch(32, (b) => b.writeUInt16LE(3, 0)), 'invalid_format'); // block align
  await expectCode(patch(40, (b) => b.writeUInt32LE(1 << 30, 0)), 'size_out_of_bounds');
  await expectCode(good.subarray(0, 36), 'no_samples'); // fmt, no data chunk
  await expectCode(writeWav({ rate: 16000, encoding: 'pcm_s16', channels: [new Float32Array(0)] }), 'no_samples');
  const hugeList = writeWav({ rate: 16000, encoding: 'pcm_s16', channels: [ref.subarray(0, 16)], extraChunks: [['LIST', Buffer.alloc(4)]] });
  hugeList.writeUInt32LE(0x7fffffff, 16);
  await expectCode(hugeList, 'size_out_of_bounds');
  const badGuid = writeWav({ rate: 16000, encoding: 'pcm_s16', channels: [ref.subarray(0, 16)], extensible: true });
  badGuid[20 + 26] = 0x42;
  await expectCode(badGuid, 'unsupported_codec');
});

test('more samples than the engines count in an int are refused from the header, before decoding', async () => {
  // 8-bit 8-kHz mono: each byte becomes two 16-kHz samples, so 2^30 + 1 bytes (about 37 hours)
  // would be 2^31 + 2 samples, which whisper.cpp's int sample count would wrap.
  const dataBytes = 2 ** 30 + 1;
  const wav = Buffer.allocUnsafe(44 + dataBytes);
  wav.write('RIFF', 0);
  wav.writeUInt32LE(36 + dataBytes, 4);
  wav.write('WAVEfmt ', 8);
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(8000, 24);
  wav.writeUInt32LE(8000, 28); // byte rate
  wav.writeUInt16LE(1, 32); // block align
  wav.writeUInt16LE(8, 34); // bits
  wav.write('data', 36);
  wav.writeUInt32LE(dataBytes, 40);
  await expectCode(wav, 'too_long');
});
