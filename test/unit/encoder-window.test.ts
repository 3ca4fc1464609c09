// The encoder window each policy gives a clip (audio_ctx; 0 is the full 30 s).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encoderWindowFor } from '../../src/stt/local/encoder-window';

test('full is always the whole window; tail adds 5 s after the clip, in blocks of 256', () => {
  const at = (seconds: number) => (['full', 'tail'] as const).map((p) => encoderWindowFor(p, seconds));
  assert.deepEqual(at(1), [0, 512]);
  assert.deepEqual(at(5), [0, 512]);
  assert.deepEqual(at(5.24), [0, 512], 'tail: where the clip and 5 s fill two blocks');
  assert.deepEqual(at(5.26), [0, 768], 'tail: one position more, the next block');
  assert.deepEqual(at(10.5), [0, 1024]);
  assert.deepEqual(at(20), [0, 1280]);
  assert.deepEqual(at(20.6), [0, 1280], 'tail: 1030 + 250 positions fill five blocks');
  assert.deepEqual(at(20.62), [0, 0], 'tail: one position more rounds up to the full window');
  assert.deepEqual(at(30), [0, 0]);
  assert.deepEqual(at(600), [0, 0], 'long audio: every 30-s window in full');
});

test("a model with a smaller encoder context is never given more than it has (whisper.cpp would refuse it)", () => {
  assert.equal(encoderWindowFor('tail', 1, 1000), 512);
  assert.equal(encoderWindowFor('tail', 16, 1000), 0, 'a window of 1280 positions in a 1000-position model is its whole window');
  assert.equal(encoderWindowFor('tail', 5, 300), 0);
});
