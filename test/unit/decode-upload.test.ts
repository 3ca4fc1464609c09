// Reading a WAV's length from its header, and decoding uploads with bounded
// memory: one decode at a time, and for a cloud target only the header and
// the first second.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeWav, type DecodedAudio } from '../../src/native';
import { readWavHeader, wavPrefix } from '../../src/stt/wav-header';
import { decodeUpload } from '../../src/stt/decode-upload';
import { Semaphore } from '../../src/stt/semaphore';
import { AbortedError } from '../../src/domain-errors';
import { writeWav, tone, type WavSpec } from '../../fixtures';

const wav = (spec: Partial<WavSpec> & { seconds: number }) =>
  writeWav({ rate: 8000, encoding: 'pcm_u8', channels: [tone(300, spec.rate ?? 8000, spec.seconds)], ...spec });

test('the header gives the same duration as the decoder', async () => {
  const cases = [
    wav({ seconds: 3 }),
    wav({ seconds: 2.5, rate: 44100, encoding: 'pcm_s24' }),
    wav({ seconds: 1, rate: 16000, encoding: 'float32', extensible: true }),
    wav({ seconds: 2, rate: 22050, encoding: 'mulaw', channels: [tone(300, 22050, 2), tone(500, 22050, 2)] }),
    wav({ seconds: 1, extraChunks: [['LIST', Buffer.alloc(7)], ['fact', Buffer.alloc(4)]] }),
    wav({ seconds: 1.5, dataSizeOverride: 0 }),
    wav({ seconds: 1.5, dataSizeOverride: 0xffffffff }),
  ];
  for (const bytes of cases) {
    const header = readWavHeader(bytes);
    assert.ok(header);
    assert.equal(header.durationSeconds, (await decodeWav(bytes)).durationSeconds);
  }
});

test('the header reads the data chunk the decoder reads, whatever the chunk order (a short chunk before fmt cannot hide a long one after it)', async () => {
  const chunk = (id: string, body: Buffer) => {
    const head = Buffer.alloc(8);
    head.write(id, 0, 'latin1');
    head.writeUInt32LE(body.length, 4);
    return Buffer.concat([head, body, Buffer.alloc(body.length & 1)]);
  };
  const fmt = Buffer.alloc(16);
  fmt.writeUInt16LE(1, 0); // PCM
  fmt.writeUInt16LE(1, 2); // mono
  fmt.writeUInt32LE(8000, 4);
  fmt.writeUInt32LE(8000, 8);
  fmt.writeUInt16LE(1, 12); // block align
  fmt.writeUInt16LE(8, 14); // 8-bit
  const riff = (...chunks: Buffer[]) => {
    const body = Buffer.concat([Buffer.from('WAVE', 'latin1'), ...chunks]);
    const head = Buffer.alloc(8);
    head.write('RIFF', 0, 'latin1');
    head.writeUInt32LE(body.length, 4);
    return Buffer.concat([head, body]);
  };
  const silence = (seconds: number) => Buffer.alloc(seconds * 8000, 128);
  for (const [bytes, seconds] of [
    [riff(chunk('data', silence(1)), chunk('fmt ', fmt), chunk('data', silence(5))), 5],
    [riff(chunk('data', silence(1)), chunk('fmt ', fmt)), 1],
    [riff(chunk('fmt ', fmt), chunk('data', silence(2)), chunk('data', silence(7))), 2],
  ] as const) {
    assert.equal((await decodeWav(bytes)).durationSeconds, seconds);
    assert.equal(readWavHeader(bytes)?.durationSeconds, seconds);
  }
});

test('what the header cannot tell is left to the decoder (null)', () => {
  const good = wav({ seconds: 1 });
  assert.equal(readWavHeader(Buffer.from('plain text, not audio')), null);
  assert.equal(readWavHeader(good.subarray(0, 30)), null);
  const oversize = Buffer.from(good);
  oversize.writeUInt32LE(1 << 30, 40); // data size past the end
  assert.equal(readWavHeader(oversize), null);
  const noRate = Buffer.from(good);
  noRate.writeUInt32LE(0, 24);
  assert.equal(readWavHeader(noRate), null);
});

test('a prefix of the header and the first second decodes on its own', async () => {
  const bytes = wav({ seconds: 30, rate: 16000, encoding: 'pcm_s16' });
  const prefix = wavPrefix(bytes, readWavHeader(bytes)!, 1)!;
  assert.ok(prefix.length < 16000 * 2 + 100);
  assert.equal((await decodeWav(prefix)).durationSeconds, 1);
});

/** A decoder that records what it was given and finishes when told. */
function fakeDecoder() {
  const calls: { bytes: number; finish: () => void }[] = [];
  const decode = (bytes: Uint8Array) =>
    new Promise<DecodedAudio>((resolve) => {
      const audio = { pcm: new Float32Array(16), durationSeconds: bytes.length / 8000, container: 'wav', codec: 'pcm_s16' } as DecodedAudio;
      calls.push({ bytes: bytes.length, finish: () => resolve(audio) });
    });
  return { calls, decode };
}

const settle = () => new Promise((r) => setImmediate(r));

test('a cloud target decodes only the header and the first second, and takes the duration from the header', async () => {
  const bytes = wav({ seconds: 600 });
  const header = readWavHeader(bytes);
  const { calls, decode } = fakeDecoder();
  const out = decodeUpload(bytes, { header, mode: 'cloud', slots: new Semaphore(1), signal: new AbortController().signal, maxSeconds: 3600, decode });
  await settle();
  assert.equal(calls.length, 1);
  assert.ok(calls[0].bytes <= 44 + 8000, `decoded ${calls[0].bytes} bytes`);
  calls[0].finish();
  const { forward, ...rest } = await out;
  assert.deepEqual(rest, { pcm: null, durationSeconds: 600, container: 'wav', codec: 'pcm_s16' });
  // The provider is sent the file as measured: here, the file itself (no chunk after its data).
  assert.deepEqual(forward, bytes);
});

test('a local target decodes the whole file and keeps the PCM', async () => {
  const bytes = wav({ seconds: 5 });
  const { calls, decode } = fakeDecoder();
  const out = decodeUpload(bytes, { header: readWavHeader(bytes), mode: 'local', slots: new Semaphore(1), signal: new AbortController().signal, maxSeconds: 3600, decode });
  await settle();
  assert.equal(calls[0].bytes, bytes.length);
  calls[0].finish();
  assert.ok((await out).pcm);
});

test('uploads are decoded one at a time; a client gone while waiting leaves the line', async () => {
  const bytes = wav({ seconds: 1 });
  const slots = new Semaphore(1);
  const { calls, decode } = fakeDecoder();
  const start = (signal = new AbortController().signal) => decodeUpload(bytes, { header: null, mode: 'local', slots, signal, maxSeconds: 3600, decode });
  const first = start();
  const gone = new AbortController();
  const second = start(gone.signal);
  const third = start();
  await settle();
  assert.equal(calls.length, 1, 'only one decode runs');
  gone.abort();
  await assert.rejects(second, AbortedError);
  calls[0].finish();
  await first;
  await settle();
  assert.equal(calls.length, 2, 'the next in line starts when the first ends');
  calls[1].finish();
  await third;
  assert.equal(slots.full, false);
});

test('forwardedAudio: a WAV as measured (fmt and the one data chunk), a WAV made from the samples when its header is not read apart, any other format as uploaded', async () => {
  const { forwardedAudio, wavFromPcm } = await import('../../src/stt/forwarded-audio');
  const made = wavFromPcm(new Float32Array([0, 0.5, -0.5, 1, -1, 2]));
  const header = readWavHeader(made)!;
  assert.deepEqual([header.sampleRate, header.blockAlign, header.dataBytes], [16000, 2, 12]);
  assert.deepEqual([...new Int16Array(made.buffer.slice(made.byteOffset + 44, made.byteOffset + 56))], [0, 16384, -16383, 32767, -32767, 32767]);
  // Whatever follows the measured data chunk is left out.
  const withTail = Buffer.concat([made, Buffer.from('data'), Buffer.from([4, 0, 0, 0, 1, 2, 3, 4]), Buffer.from('LIST'), Buffer.from([0, 0, 0, 0])]);
  withTail.writeUInt32LE(withTail.length - 8, 4);
  assert.deepEqual(forwardedAudio(withTail, 'wav', readWavHeader(withTail), null), made);
  const mp3 = Buffer.from('ID3 not really an mp3');
  assert.equal(forwardedAudio(mp3, 'mp3', null, null), mp3);
  assert.deepEqual(forwardedAudio(Buffer.from('RIFF????WAVEodd'), 'wav', null, new Float32Array([0, 0.5, -0.5, 1, -1, 2])), made);
});
