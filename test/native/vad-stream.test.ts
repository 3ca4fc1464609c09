// The addon's VadStream (native/binding/vad_stream.cpp): Silero over live audio, its
// state carried from piece to piece. The probabilities do not depend on how
// the audio is cut into pieces, on a stream's age or on another stream
// running beside it (a fresh stream's LSTM state once started as whatever
// the allocator left, and turns came and went with it); misuse is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createVadStream, decodeWav, VAD_FRAME } from '../../src/native';
import { AUDIO_DIR, VAD_FIXTURE } from '../../fixtures';

async function jfk(): Promise<Float32Array> {
  const pcm = (await decodeWav(readFileSync(path.join(AUDIO_DIR, 'jfk.wav')))).pcm;
  return pcm.slice(0, Math.floor(pcm.length / VAD_FRAME) * VAD_FRAME);
}

async function probabilities(pcm: Float32Array, pieceFrames: number): Promise<number[]> {
  const stream = createVadStream(VAD_FIXTURE);
  const out: number[] = [];
  for (let at = 0; at < pcm.length; at += pieceFrames * VAD_FRAME) {
    out.push(...(await stream.detect(pcm.subarray(at, Math.min(pcm.length, at + pieceFrames * VAD_FRAME)))));
  }
  stream.free();
  return out;
}

test('the same probabilities whatever the pieces, on fresh streams, alone or two at once', async () => {
  const pcm = await jfk();
  const whole = await probabilities(pcm, pcm.length / VAD_FRAME);
  assert.equal(whole.length, pcm.length / VAD_FRAME);
  // JFK is mostly speech, with pauses: both kinds of frames are there.
  const speech = whole.filter((p) => p >= 0.5).length;
  assert.ok(speech > whole.length * 0.5 && speech < whole.length * 0.95, `${speech} of ${whole.length} frames speech`);
  for (let round = 0; round < 5; round++) {
    const [one, three] = await Promise.all([probabilities(pcm, 1), probabilities(pcm, 3)]);
    assert.deepEqual(one, whole, `round ${round}: one frame at a time`);
    assert.deepEqual(three, whole, `round ${round}: three frames at a time, beside another stream`);
  }
});

test('reset() forgets what was heard: speech then reset gives what a fresh stream gives', async () => {
  const pcm = await jfk();
  const fresh = await probabilities(pcm.subarray(0, 64 * VAD_FRAME), 64);
  const stream = createVadStream(VAD_FIXTURE);
  await stream.detect(pcm.subarray(100 * VAD_FRAME, 164 * VAD_FRAME));
  stream.reset();
  assert.deepEqual(Array.from(await stream.detect(pcm.subarray(0, 64 * VAD_FRAME))), fresh);
  stream.free();
});

test('misuse is refused: a bad model path, a part of a frame, a second piece while one is judged, a freed stream', async () => {
  assert.throws(() => createVadStream('/nonexistent/silero.bin'), /could not load the VAD model/);
  assert.throws(() => createVadStream(''), TypeError);
  const stream = createVadStream(VAD_FIXTURE);
  await assert.rejects(async () => stream.detect(new Float32Array(VAD_FRAME + 1)), RangeError);
  await assert.rejects(async () => stream.detect(new Float32Array(0)), RangeError);
  await assert.rejects(async () => stream.detect([0] as unknown as Float32Array), TypeError);
  const first = stream.detect(new Float32Array(8 * VAD_FRAME));
  await assert.rejects(async () => stream.detect(new Float32Array(VAD_FRAME)), /still being judged/);
  assert.throws(() => stream.reset(), /still being judged/);
  // Freed while a piece is judged: the piece still resolves, then the stream is spent.
  stream.free();
  assert.equal((await first).length, 8);
  await assert.rejects(async () => stream.detect(new Float32Array(VAD_FRAME)), /free\(\) was called/);
});
