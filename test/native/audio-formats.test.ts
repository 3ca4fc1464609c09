// The decoders other than WAV, through the one entry uploads take
// (src/audio/decode-audio.ts): MP3 and FLAC in the addon
// (native/audio/audio_decoder.cpp), Ogg Opus, Ogg Vorbis and WebM Opus in
// WebAssembly. Each container is sniffed from its bytes (after ID3 tags) and
// decoded to the same 16-kHz speech as the WAV it was made from; what is not
// decoded is named; a stated or real length over the limit is refused;
// damaged streams are refused or cut short, never a crash.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { execFileSync } from 'node:child_process';
import { decodeWav, WavError } from '../../src/native';
import { decodeAudio } from '../../src/audio/decode-audio';
import { readWebm } from '../../src/audio/webm-reader';
import { stopDecoderThread } from '../../src/audio/decoder-thread';
import { AUDIO_DIR, encodedAudio, ROOT } from '../../fixtures';

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

/** A 4-s recording by Chromium's MediaRecorder (fixtures/browser-recording.ts): WebM/Opus, unknown sizes, no duration. */
const BROWSER_WEBM = readFileSync(path.join(ROOT, 'fixtures', 'audio', 'chromium-mediarecorder-jfk-4s.webm'));

/** One Ogg page holding `packet` (by default the first and last page of its stream; no checksum: the reader does not verify it). */
function oggPage(packet: Buffer, granule = 0n, flags = 0x02 | 0x04): Buffer {
  const lacing = [...Array(Math.floor(packet.length / 255)).fill(255), packet.length % 255];
  const header = Buffer.alloc(27);
  header.write('OggS', 0, 'latin1');
  header[5] = flags;
  header.writeBigInt64LE(granule, 6);
  header.writeUInt32LE(1, 14);
  header[26] = lacing.length;
  return Buffer.concat([header, Buffer.from(lacing), packet]);
}

/** A copy of an Ogg file with every page's granule position set to -1 ("no packet ends here"): its length is stated nowhere. */
function withoutGranules(ogg: Buffer): Buffer {
  const out = Buffer.from(ogg);
  for (let at = 0; at + 27 <= out.length; ) {
    out.writeBigInt64LE(-1n, at + 6);
    const segments = out[at + 26];
    at += 27 + segments + out.subarray(at + 27, at + 27 + segments).reduce((a, b) => a + b, 0);
  }
  return out;
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

/** The lag (within ±maxLag samples) at which `b` best matches `a`, and that correlation. */
function bestLag(a: Float32Array, b: Float32Array, maxLag: number): { lag: number; r: number } {
  let best = { lag: 0, r: -1 };
  for (let lag = -maxLag; lag <= maxLag; lag++) {
    const r = lag >= 0 ? correlation(a, b, lag) : correlation(b, a, -lag);
    if (r > best.r) best = { lag, r };
  }
  return best;
}

test('Ogg Opus and Ogg Vorbis: the same speech as the WAV, in step with it and exactly its length, at 44.1 kHz stereo too', async () => {
  const wav = await decodeWav(readFileSync(JFK));
  for (const format of ['opus', 'ogg'] as const) {
    for (const shape of [{}, { rate: 44100, channels: 2 }]) {
      const got = await decodeAudio(encodedAudio(JFK, format, shape), LIMIT);
      const codec = format === 'opus' ? 'opus' : 'vorbis';
      assert.equal(got.container, 'ogg');
      assert.equal(got.codec, codec);
      assert.equal(got.channels, shape.channels ?? 1);
      // Opus always runs at 48 kHz; Vorbis keeps the recording's rate.
      assert.equal(got.sampleRate, codec === 'opus' ? 48000 : shape.rate ?? 16000);
      // The last page's granule position trims Opus's padding, and the pre-skip its delay: not a sample more or less.
      assert.equal(got.pcm.length, wav.pcm.length, `${format} ${JSON.stringify(shape)}: ${got.pcm.length} samples`);
      const { lag, r } = bestLag(wav.pcm.subarray(16000, 16000 * 4), got.pcm.subarray(16000, 16000 * 4), 400);
      assert.equal(lag, 0, `${format} ${JSON.stringify(shape)}: in step with the WAV (best match ${lag} samples off)`);
      assert.ok(r > 0.98, `${format} ${JSON.stringify(shape)}: correlation ${r.toFixed(3)}`);
    }
  }
});

test('WebM/Opus as Chromium\'s MediaRecorder writes it (Segment and Clusters of unknown size, no duration): the same speech', async () => {
  const wav = await decodeWav(readFileSync(JFK));
  const got = await decodeAudio(BROWSER_WEBM, LIMIT);
  assert.equal(got.container, 'webm');
  assert.equal(got.codec, 'opus');
  assert.equal(got.channels, 2);
  assert.ok(Math.abs(got.durationSeconds - 4) < 0.1, `${got.durationSeconds} s`);
  // The browser starts recording a little after the sound starts: allow its latency.
  const { r } = bestLag(wav.pcm.subarray(8000, 16000 * 3), got.pcm.subarray(8000, 16000 * 3), 2000);
  assert.ok(r > 0.95, `correlation ${r.toFixed(3)} with the WAV`);
});

/** A minimal EBML element: id bytes, an 8-byte size, the body. */
function ebml(id: number[], ...body: Buffer[]): Buffer {
  const content = Buffer.concat(body);
  const size = Buffer.alloc(8);
  size.writeBigUInt64BE(BigInt(content.length) | (1n << 56n));
  return Buffer.concat([Buffer.from(id), size, content]);
}
const UNKNOWN_SIZE = Buffer.from([0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);

/** A WebM holding `frames` in SimpleBlocks of `perBlock` frames laced as `lacing` (0 none, 1 Xiph, 2 fixed, 3 EBML). */
function webmWith(codecPrivate: Uint8Array, frames: Uint8Array[], perBlock: number, lacing: number, docType = 'webm'): Buffer {
  const blocks: Buffer[] = [];
  for (let i = 0; i < frames.length; i += perBlock) {
    const group = frames.slice(i, i + perBlock).map((f) => Buffer.from(f));
    const head = Buffer.from([0x81, 0x00, 0x00, 0x80 | (lacing << 1)]);
    let laceHead = Buffer.alloc(0);
    if (lacing === 1) laceHead = Buffer.from([group.length - 1, ...group.slice(0, -1).flatMap((f) => [...Array(Math.floor(f.length / 255)).fill(255), f.length % 255])]);
    if (lacing === 2) laceHead = Buffer.from([group.length - 1]);
    if (lacing === 3) {
      // The first size as a 2-byte vint, then each difference as a signed 2-byte vint (bias 8191).
      const sizes = group.slice(0, -1).map((f) => f.length);
      const vints = sizes.map((size, k) => (k === 0 ? size : size - sizes[k - 1] + 8191) | 0x4000);
      laceHead = Buffer.from([group.length - 1, ...vints.flatMap((v) => [v >> 8, v & 0xff])]);
    }
    blocks.push(ebml([0xa3], head, laceHead, ...group));
  }
  const header = ebml([0x1a, 0x45, 0xdf, 0xa3], ebml([0x42, 0x82], Buffer.from(docType)));
  const tracks = ebml([0x16, 0x54, 0xae, 0x6b], ebml([0xae], ebml([0xd7], Buffer.from([1])), ebml([0x83], Buffer.from([2])), ebml([0x86], Buffer.from('A_OPUS')), ebml([0x63, 0xa2], Buffer.from(codecPrivate))));
  const cluster = Buffer.concat([Buffer.from([0x1f, 0x43, 0xb6, 0x75]), UNKNOWN_SIZE, ebml([0xe7], Buffer.from([0])), ...blocks]);
  return Buffer.concat([header, Buffer.from([0x18, 0x53, 0x80, 0x67]), UNKNOWN_SIZE, tracks, cluster]);
}

test('WebM lacing (Xiph, EBML, fixed) gives back the frames laced, and the same audio as one frame a block', async () => {
  const source = readWebm(BROWSER_WEBM);
  const frames = [...source.frames].slice(0, 60);
  const codecPrivate = source.track!.codecPrivate!;
  const plain = await decodeAudio(webmWith(codecPrivate, frames, 1, 0), LIMIT);
  for (const lacing of [1, 3]) {
    const file = webmWith(codecPrivate, frames, 4, lacing);
    assert.deepEqual([...readWebm(file).frames].map((f) => Buffer.from(f)), frames.map((f) => Buffer.from(f)), `lacing ${lacing}: the frames`);
    assert.deepEqual((await decodeAudio(file, LIMIT)).pcm, plain.pcm, `lacing ${lacing}: the audio`);
  }
  // Fixed lacing needs frames of one size: one frame three times over, read back and decoded as unlaced.
  const same = [frames[10], frames[10], frames[10]];
  assert.deepEqual([...readWebm(webmWith(codecPrivate, same, 3, 2)).frames].map((f) => Buffer.from(f)), same.map((f) => Buffer.from(f)));
  assert.deepEqual((await decodeAudio(webmWith(codecPrivate, same, 3, 2), LIMIT)).pcm, (await decodeAudio(webmWith(codecPrivate, same, 1, 0), LIMIT)).pcm);
  // A Matroska file (DocType matroska) holding Opus is read the same, and says what it is.
  const mkv = await decodeAudio(webmWith(codecPrivate, frames, 1, 0, 'matroska'), LIMIT);
  assert.equal(mkv.container, 'matroska');
  assert.deepEqual(mkv.pcm, plain.pcm);
});

test('what this build does not decode is named by container and codec', async () => {
  // Raw AAC (ADTS), AIFF: named too.
  await expectCode(Buffer.concat([Buffer.from([0xff, 0xf1, 0x50, 0x80, 0x02, 0x1f, 0xfc]), Buffer.alloc(200)]), 'unsupported_codec', LIMIT, /aac/);
  await expectCode(Buffer.concat([Buffer.from('FORM'), Buffer.alloc(4), Buffer.from('AIFF'), Buffer.alloc(64)]), 'unsupported_codec', LIMIT, /aiff/);
  // An M4A (ftyp box) header.
  const m4a = Buffer.concat([Buffer.from([0, 0, 0, 0x20]), Buffer.from('ftypM4A '), Buffer.alloc(64)]);
  await expectCode(m4a, 'unsupported_codec', LIMIT, /mp4/);
  // A WebM whose audio is AAC (the recording's codec id rewritten), an Ogg stream of Speex.
  const aacWebm = Buffer.from(BROWSER_WEBM);
  aacWebm.write('A_AAC\0', aacWebm.indexOf('A_OPUS'), 'latin1');
  await expectCode(aacWebm, 'unsupported_codec', LIMIT, /webm\/aac is not decoded/);
  await expectCode(oggPage(Buffer.from('Speex   1.2rc1' + ' '.repeat(66))), 'unsupported_codec', LIMIT, /ogg\/speex/);
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

/** The recording with a Duration (float64, in the default 1-ms timecode units) added to its Info element, its size updated. */
function withStatedDuration(webm: Buffer, ms: number): Buffer {
  const info = webm.indexOf(Buffer.from([0x15, 0x49, 0xa9, 0x66]));
  assert.ok(info > 0, 'the recording has an Info element');
  const sizeLength = Math.clz32(webm[info + 4]) - 23;
  let size = webm[info + 4] & (0xff >> sizeLength);
  for (let i = 1; i < sizeLength; i++) size = size * 256 + webm[info + 4 + i];
  const duration = Buffer.alloc(11);
  duration.set([0x44, 0x89, 0x88]);
  duration.writeDoubleBE(ms, 3);
  const header = Buffer.from(webm.subarray(info, info + 4 + sizeLength));
  let newSize = size + duration.length;
  for (let i = sizeLength - 1; i >= 0; i--, newSize = Math.floor(newSize / 256)) header[4 + i] = newSize & 0xff;
  header[4] |= 0x80 >> (sizeLength - 1);
  return Buffer.concat([webm.subarray(0, info), header, duration, webm.subarray(info + 4 + sizeLength)]);
}

test('Ogg and WebM over the limit: refused from the last page\'s granule or the stated Duration before decoding; without them, decoding stops at the limit', async () => {
  await expectCode(encodedAudio(JFK, 'opus'), 'audio_too_long', 5, /^ogg\/opus: 11 s$/);
  await expectCode(encodedAudio(JFK, 'ogg'), 'audio_too_long', 5, /^ogg\/vorbis: 11 s$/);
  // A granule position claiming ten hours (a decompression bomb's header) is refused at once.
  const bomb = Buffer.from(encodedAudio(JFK, 'opus'));
  const lastPage = bomb.lastIndexOf('OggS');
  bomb.writeBigInt64LE(48000n * 36000n, lastPage + 6);
  await expectCode(bomb, 'audio_too_long', LIMIT, /36000 s/);
  // No granule positions anywhere: it decodes whole under the limit, and stops at it over.
  assert.ok((await decodeAudio(withoutGranules(encodedAudio(JFK, 'opus')), LIMIT)).durationSeconds > 10.9);
  await expectCode(withoutGranules(encodedAudio(JFK, 'opus')), 'audio_too_long', 5, /^ogg\/opus: longer than 5 s$/);
  await expectCode(withoutGranules(encodedAudio(JFK, 'ogg')), 'audio_too_long', 5, /^ogg\/vorbis: longer than 5 s$/);
  assert.ok((await decodeAudio(withoutGranules(encodedAudio(JFK, 'ogg')), LIMIT)).durationSeconds > 10.9);
  // MediaRecorder states no Duration: stopped at the limit. With one stated, refused from it.
  await expectCode(BROWSER_WEBM, 'audio_too_long', 2, /^webm\/opus: longer than 2 s$/);
  await expectCode(withStatedDuration(BROWSER_WEBM, 36_000_000), 'audio_too_long', LIMIT, /^webm\/opus: 36000 s$/);
  assert.ok((await decodeAudio(withStatedDuration(BROWSER_WEBM, 4000), LIMIT)).durationSeconds > 3.9, 'a true stated Duration decodes');
});

test('damaged Ogg and WebM: a truncated file keeps what decoded; a broken header or garbage is corrupt_audio; the decoders still work after', async () => {
  for (const [name, whole, seconds] of [['ogg/opus', encodedAudio(JFK, 'opus'), 11], ['ogg/vorbis', encodedAudio(JFK, 'ogg'), 11], ['webm/opus', BROWSER_WEBM, 4]] as const) {
    const half = await decodeAudio(whole.subarray(0, Math.floor(whole.length / 2)), LIMIT);
    assert.ok(half.durationSeconds > seconds * 0.3 && half.durationSeconds < seconds * 0.7, `${name}: half the file gave ${half.durationSeconds} s`);
  }
  // An OpusHead cut short, a Vorbis header with 0 channels, Opus packets of noise.
  await expectCode(oggPage(Buffer.from('OpusHead\x01\x01')), 'corrupt_audio', LIMIT, /ogg\/opus: no Opus identification header/);
  const vorbisHead = Buffer.concat([Buffer.from('\x01vorbis', 'latin1'), Buffer.alloc(23)]);
  await expectCode(oggPage(vorbisHead), 'unsupported_format', LIMIT, /ogg\/vorbis: 0 channels/);
  const opusHead = readWebm(BROWSER_WEBM).track!.codecPrivate!;
  const pages = [oggPage(Buffer.from(opusHead), 0n, 0x02), oggPage(Buffer.from('OpusTags'), 0n, 0)];
  // Code-3 packets (0x?3) whose frame count byte asks for more frames than the packet holds: libopus refuses each.
  for (let i = 1; i <= 20; i++) pages.push(oggPage(Buffer.from([0xfb, 0xbf, ...Buffer.alloc(40, 0x11)]), BigInt(i * 960), i === 20 ? 0x04 : 0));
  await expectCode(Buffer.concat(pages), 'corrupt_audio', LIMIT, /^ogg\/opus: 9 packets could not be decoded$/);
  // Empty Opus packets (fixed lacing of 0-byte frames) are no packets: libopus would conceal 360 ms for each.
  const empty = webmWith(opusHead, Array.from({ length: 60 }, () => new Uint8Array(0)), 20, 2);
  await expectCode(empty, 'corrupt_audio', LIMIT, /^webm\/opus: 9 packets could not be decoded$/);
  // A WebM cut before its Tracks: no audio track.
  await expectCode(BROWSER_WEBM.subarray(0, 40), 'corrupt_audio', LIMIT, /webm: no audio track/);
  assert.equal((await decodeAudio(encodedAudio(JFK, 'opus'), LIMIT)).codec, 'opus');
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

test('the decoder thread (Ogg, WebM): a decode in flight when it dies fails with decode_failed, and the next file starts a new one', async () => {
  const inFlight = decodeAudio(encodedAudio(JFK, 'ogg', { rate: 44100, channels: 2 }), LIMIT);
  await stopDecoderThread();
  await assert.rejects(inFlight, (err: Error & { code?: string }) => err instanceof WavError && err.code === 'decode_failed' && /decoder thread stopped/.test(err.message));
  assert.equal((await decodeAudio(encodedAudio(JFK, 'opus'), LIMIT)).codec, 'opus');
  assert.equal((await decodeAudio(BROWSER_WEBM, LIMIT)).container, 'webm');
});

test('decodeAudio refuses a missing or non-positive limit', () => {
  assert.throws(() => decodeAudio(Buffer.alloc(10), 0), RangeError);
  assert.throws(() => decodeAudio(Buffer.alloc(10), Infinity), RangeError);
  assert.throws(() => (decodeAudio as unknown as (b: Buffer) => unknown)(Buffer.alloc(10)), TypeError);
});
