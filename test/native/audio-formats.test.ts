// The decoders other than WAV (native/audio_decoder.cpp): each container
// sniffed from its bytes (after ID3 tags) and decoded to the same 16-kHz
// speech as the WAV it was made from; what is not decoded is named; a stated
// or real length over the limit is refused; damaged streams are refused or
// cut short, never a crash.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { execFileSync } from 'node:child_process';
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

test('mp3: the same speech as the WAV, at 44.1 kHz stereo too (downmixed and resampled as it decodes)', async () => {
  const wav = await decodeWav(readFileSync(JFK));
  for (const shape of [{}, { rate: 44100, channels: 2 }]) {
    const got = await decodeAudio(encodedAudio(JFK, 'mp3', shape), LIMIT);
    assert.equal(got.container, 'mp3');
    assert.equal(got.codec, 'mp3');
    assert.equal(got.channels, shape.channels ?? 1);
    assert.equal(got.sampleRate, shape.rate ?? 16000);
    // An MP3 encoder pads the end (and its decoder delays the start) by a frame or two.
    assert.ok(got.durationSeconds >= wav.durationSeconds && got.durationSeconds - wav.durationSeconds < 0.2, `${got.durationSeconds} s against ${wav.durationSeconds} s`);
    assert.ok(Math.abs(got.pcm.length / 16000 - got.durationSeconds) < 0.01, 'the 16-kHz output covers the whole duration');
    // Lossy, and the decoder's delay shifts it by up to a few hundred samples at 16 kHz.
    const r = bestCorrelation(wav.pcm.subarray(16000, 16000 * 4), got.pcm.subarray(16000, 16000 * 4 + 2000), 2000);
    assert.ok(r > 0.9, `correlation ${r.toFixed(3)} with the WAV`);
  }
});

test('FLAC at 44.1 kHz stereo: resampled as it decodes, the same as the WAV at that rate resampled whole', async () => {
  // One 44.1-kHz stereo WAV (sox dithers each conversion differently), and the FLAC made from it.
  const wav44 = path.join(os.tmpdir(), `jfk-44k-${process.pid}.wav`);
  execFileSync('sox', [JFK, '-r', '44100', '-c', '2', '-b', '16', wav44]);
  const flac = await decodeAudio(encodedAudio(wav44, 'flac'), LIMIT);
  const whole = await decodeWav(readFileSync(wav44));
  rmSync(wav44);
  assert.equal(flac.sampleRate, 44100);
  assert.equal(flac.pcm.length, whole.pcm.length);
  let maxDiff = 0;
  for (let i = 0; i < whole.pcm.length; i++) maxDiff = Math.max(maxDiff, Math.abs(whole.pcm[i] - flac.pcm[i]));
  assert.ok(maxDiff < 1e-5, `largest difference ${maxDiff}`);
});

test('ID3 tags in front are skipped before sniffing: a tagged FLAC is FLAC', async () => {
  const id3 = Buffer.from('ID3\x03\x00\x00\x00\x00\x00\x05TAGxx', 'latin1');
  const tagged = await decodeAudio(Buffer.concat([id3, encodedAudio(JFK, 'flac')]), LIMIT);
  assert.equal(tagged.container, 'flac');
  assert.equal((await decodeAudio(Buffer.concat([id3, encodedAudio(JFK, 'mp3')]), LIMIT)).container, 'mp3');
});

test('the format is sniffed from the bytes: a WAV still decodes through decodeAudio, with its details', async () => {
  const got = await decodeAudio(readFileSync(JFK), LIMIT);
  assert.equal(got.container, 'wav');
  assert.equal(got.codec, 'pcm_s16');
  assert.equal(got.bitsPerSample, 16);
});

test('what this build does not decode is named by container and codec', async () => {
  await expectCode(encodedAudio(JFK, 'opus'), 'unsupported_codec', LIMIT, /ogg\/opus/);
  await expectCode(encodedAudio(JFK, 'ogg'), 'unsupported_codec', LIMIT, /ogg\/vorbis/);
  // Raw AAC (ADTS), AIFF: named too.
  await expectCode(Buffer.concat([Buffer.from([0xff, 0xf1, 0x50, 0x80, 0x02, 0x1f, 0xfc]), Buffer.alloc(200)]), 'unsupported_codec', LIMIT, /aac/);
  await expectCode(Buffer.concat([Buffer.from('FORM'), Buffer.alloc(4), Buffer.from('AIFF'), Buffer.alloc(64)]), 'unsupported_codec', LIMIT, /aiff/);
  // A WebM (EBML magic, DocType webm) and an M4A (ftyp box) header.
  const webm = Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 0x01, 0x42, 0x82, 0x84]), Buffer.from('webm'), Buffer.alloc(64)]);
  await expectCode(webm, 'unsupported_codec', LIMIT, /webm/);
  const m4a = Buffer.concat([Buffer.from([0, 0, 0, 0x20]), Buffer.from('ftypM4A '), Buffer.alloc(64)]);
  await expectCode(m4a, 'unsupported_codec', LIMIT, /mp4/);
  // Bytes that are no audio at all go to the WAV decoder, which says what is wrong.
  await expectCode(Buffer.from('this is plain text, not audio'), 'not_riff_wave');
});

test('over the limit: refused from the FLAC header before decoding; MP3, and FLAC without a stated length, stop at the limit', async () => {
  await expectCode(encodedAudio(JFK, 'flac'), 'audio_too_long', 5, /flac: 11 s/);
  await expectCode(encodedAudio(JFK, 'mp3'), 'audio_too_long', 5, /mp3: longer than 5 s/);
  // STREAMINFO starts at byte 8; its total-samples field is the low 36 bits of bytes 21-25 (after rate, channels, bits).
  const withTotal = (total: number) => {
    const b = Buffer.from(encodedAudio(JFK, 'flac'));
    b[21] = (b[21] & 0xf0) | Math.floor(total / 2 ** 32);
    b.writeUInt32BE(total % 2 ** 32, 22);
    return b;
  };
  // A header claiming ten hours (a decompression bomb's) is refused at once, naming what it claims.
  await expectCode(withTotal(16000 * 36000), 'audio_too_long', LIMIT, /36000 s/);
  // A header that states no length (0, as a streaming encoder writes): decoding stops at the limit instead.
  await expectCode(withTotal(0), 'audio_too_long', 5, /longer than 5 s/);
  assert.ok((await decodeAudio(withTotal(0), LIMIT)).durationSeconds > 10.9, 'and decodes whole under it');
});

test('damaged streams: a truncated file keeps what decoded, garbage after a magic is corrupt_audio, never a crash', async () => {
  for (const format of ['mp3', 'flac'] as const) {
    const whole = encodedAudio(JFK, format);
    const half = await decodeAudio(whole.subarray(0, Math.floor(whole.length / 2)), LIMIT);
    assert.ok(half.durationSeconds > 3 && half.durationSeconds < 8, `${format}: half the file gave ${half.durationSeconds} s`);
  }
  await expectCode(Buffer.concat([Buffer.from('fLaC'), Buffer.alloc(200, 0xab)]), 'corrupt_audio', LIMIT, /flac/);
  // The process is fine: a clean file still decodes.
  assert.equal((await decodeAudio(encodedAudio(JFK, 'mp3'), LIMIT)).container, 'mp3');
});

test('decodeAudio refuses a missing or non-positive limit', () => {
  assert.throws(() => decodeAudio(Buffer.alloc(10), 0), RangeError);
  assert.throws(() => decodeAudio(Buffer.alloc(10), Infinity), RangeError);
  assert.throws(() => (decodeAudio as unknown as (b: Buffer) => unknown)(Buffer.alloc(10)), TypeError);
});
