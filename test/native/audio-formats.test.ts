// The decoders other than WAV (native/audio_decoder.cpp): each container
// sniffed from its bytes and decoded to the same 16-kHz speech as the WAV it
// was made from; what is not decoded is named; a stated or real length over
// the limit is refused; damaged streams are refused or cut short, never a crash.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { decodeAudio, decodeWav, WavError } from '../../src/native';
import { AUDIO_DIR, encodedAudio } from '../../fixtures';

const JFK = path.join(AUDIO_DIR, 'jfk.wav');
const LIMIT = 3600;

async function expectCode(bytes: Buffer, code: string, maxSeconds = LIMIT, message?: RegExp): Promise<void> {
  await assert.rejects(decodeAudio(bytes, maxSeconds), (err: Error & { code?: string }) => {
    assert.ok(err instanceof WavError, `a WavError, not ${err.constructor.name}: ${err.message}`);
    assert.equal(err.code, code, `expected ${code}, got ${err.code}: ${err.message}`);
    if (message) assert.match(err.message, message);
    return true;
  });
}

/** Correlation of two signals over the shorter one's length (1: the same shape). */
function correlation(a: Float32Array, b: Float32Array, lag = 0): number {
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i + lag < b.length && i < a.length; i++) {
    ab += a[i] * b[i + lag];
    aa += a[i] * a[i];
    bb += b[i + lag] * b[i + lag];
  }
  return ab / Math.sqrt(aa * bb);
}

/** The best correlation over lags up to `maxLag` samples (MP3 and Vorbis decoders add a delay). */
const bestCorrelation = (a: Float32Array, b: Float32Array, maxLag: number) =>
  Math.max(...Array.from({ length: maxLag + 1 }, (_, lag) => correlation(a, b, lag)));

test('FLAC is lossless: the same 16-kHz samples as the WAV it was made from', async () => {
  const wav = await decodeWav(readFileSync(JFK));
  const flac = await decodeAudio(encodedAudio(JFK, 'flac'), LIMIT);
  assert.equal(flac.container, 'flac');
  assert.equal(flac.codec, 'flac');
  assert.equal(flac.sampleRate, 16000);
  assert.equal(flac.pcm.length, wav.pcm.length);
  let maxDiff = 0;
  for (let i = 0; i < wav.pcm.length; i++) maxDiff = Math.max(maxDiff, Math.abs(wav.pcm[i] - flac.pcm[i]));
  assert.ok(maxDiff < 1e-6, `largest difference ${maxDiff}`);
});

for (const [format, container, codec] of [['mp3', 'mp3', 'mp3'], ['ogg', 'ogg', 'vorbis']] as const) {
  test(`${format}: the same speech as the WAV, at 44.1 kHz stereo too (downmixed and resampled)`, async () => {
    const wav = await decodeWav(readFileSync(JFK));
    for (const shape of [{}, { rate: 44100, channels: 2 }]) {
      const got = await decodeAudio(encodedAudio(JFK, format, shape), LIMIT);
      assert.equal(got.container, container);
      assert.equal(got.codec, codec);
      assert.equal(got.channels, shape.channels ?? 1);
      assert.ok(Math.abs(got.durationSeconds - wav.durationSeconds) < 0.1, `${got.durationSeconds} s against ${wav.durationSeconds} s`);
      // Lossy, and the decoder's delay shifts it by up to a few hundred samples at 16 kHz.
      const r = bestCorrelation(wav.pcm.subarray(16000, 16000 * 4), got.pcm.subarray(16000, 16000 * 4 + 2000), 2000);
      assert.ok(r > 0.9, `correlation ${r.toFixed(3)} with the WAV`);
    }
  });
}

test('the format is sniffed from the bytes: a WAV still decodes through decodeAudio, with its details', async () => {
  const got = await decodeAudio(readFileSync(JFK), LIMIT);
  assert.equal(got.container, 'wav');
  assert.equal(got.codec, 'pcm_s16');
  assert.equal(got.bitsPerSample, 16);
});

test('what this build does not decode is named by container and codec', async () => {
  await expectCode(encodedAudio(JFK, 'opus'), 'unsupported_codec', LIMIT, /ogg\/opus/);
  // A WebM (EBML magic, DocType webm) and an M4A (ftyp box) header.
  const webm = Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 0x01, 0x42, 0x82, 0x84]), Buffer.from('webm'), Buffer.alloc(64)]);
  await expectCode(webm, 'unsupported_codec', LIMIT, /webm/);
  const m4a = Buffer.concat([Buffer.from([0, 0, 0, 0x20]), Buffer.from('ftypM4A '), Buffer.alloc(64)]);
  await expectCode(m4a, 'unsupported_codec', LIMIT, /mp4/);
  // Bytes that are no audio at all go to the WAV decoder, which says what is wrong.
  await expectCode(Buffer.from('this is plain text, not audio'), 'not_riff_wave');
});

test('over the limit: refused from the FLAC header before decoding, and MP3 or Vorbis decoding stops at the limit', async () => {
  await expectCode(encodedAudio(JFK, 'flac'), 'audio_too_long', 5, /flac/);
  await expectCode(encodedAudio(JFK, 'mp3'), 'audio_too_long', 5, /mp3/);
  await expectCode(encodedAudio(JFK, 'ogg'), 'audio_too_long', 5, /vorbis/);
  // A FLAC whose STREAMINFO claims ten hours of audio (a decompression bomb's header) is refused at once.
  const bomb = Buffer.from(encodedAudio(JFK, 'flac'));
  // STREAMINFO starts at byte 8; its total-samples field is the low 36 bits of bytes 21-25 (after rate, channels, bits).
  const total = 16000 * 36000;
  bomb[21] = (bomb[21] & 0xf0) | Math.floor(total / 2 ** 32);
  bomb.writeUInt32BE(total % 2 ** 32, 22);
  await expectCode(bomb, 'audio_too_long', LIMIT, /36000 s/);
});

test('damaged streams: a truncated file keeps what decoded, garbage after a magic is corrupt_audio, never a crash', async () => {
  for (const format of ['mp3', 'flac', 'ogg'] as const) {
    const whole = encodedAudio(JFK, format);
    const half = await decodeAudio(whole.subarray(0, Math.floor(whole.length / 2)), LIMIT).catch((e: WavError) => e);
    if (half instanceof WavError) assert.equal(half.code, 'corrupt_audio', `${format}: ${half.message}`);
    else assert.ok(half.durationSeconds > 2 && half.durationSeconds < 9, `${format}: half the file gave ${half.durationSeconds} s`);
  }
  await expectCode(Buffer.concat([Buffer.from('fLaC'), Buffer.alloc(200, 0xab)]), 'corrupt_audio', LIMIT, /flac/);
  await expectCode(Buffer.concat([Buffer.from('OggS'), Buffer.alloc(30), Buffer.from('\x01vorbis'), Buffer.alloc(100, 7)]), 'corrupt_audio', LIMIT, /vorbis/);
  // The process is fine: a clean file still decodes.
  assert.equal((await decodeAudio(encodedAudio(JFK, 'mp3'), LIMIT)).container, 'mp3');
});

test('decodeAudio refuses a missing or non-positive limit', () => {
  assert.throws(() => decodeAudio(Buffer.alloc(10), 0), RangeError);
  assert.throws(() => (decodeAudio as unknown as (b: Buffer) => unknown)(Buffer.alloc(10)), TypeError);
});
