// The encoder window each policy gives a clip (audio_ctx; 0 is the full 30 s).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encoderWindowFor } from '../../src/stt/local/encoder-window';

test('full is always the whole window; shrink fits the clip plus 64 positions; floor fits it but never under 15.36 s; tail adds 5 s after it; in blocks of 256', () => {
  const at = (seconds: number) => ['full', 'floor', 'shrink', 'tail'].map((p) => encoderWindowFor(p as 'full', seconds));
  assert.deepEqual(at(1), [0, 768, 256, 512]);
  assert.deepEqual(at(5), [0, 768, 512, 512]);
  assert.deepEqual(at(5.24), [0, 768, 512, 512], 'tail: where the clip and 5 s fill two blocks');
  assert.deepEqual(at(5.26), [0, 768, 512, 768], 'tail: one position more, the next block');
  assert.deepEqual(at(8.96), [0, 768, 512, 768], 'shrink: 448 + 64 positions fill two blocks (8.96 × 50 is not exactly 448 in floating point)');
  assert.deepEqual(at(10.5), [0, 768, 768, 1024]);
  assert.deepEqual(at(14.08), [0, 768, 768, 1024], 'where the clip and its margin fill the floor');
  assert.deepEqual(at(14.1), [0, 1024, 1024, 1024], 'one position more: the next block');
  assert.deepEqual(at(20), [0, 1280, 1280, 1280]);
  assert.deepEqual(at(20.6), [0, 1280, 1280, 1280], 'tail: 1030 + 250 positions fill five blocks');
  assert.deepEqual(at(20.62), [0, 1280, 1280, 0], 'tail: one position more rounds up to the full window');
  assert.deepEqual(at(24.32), [0, 1280, 1280, 0]);
  assert.deepEqual(at(24.34), [0, 0, 0, 0], 'a window of 1536 or more is the full window');
  assert.deepEqual(at(30), [0, 0, 0, 0]);
  assert.deepEqual(at(600), [0, 0, 0, 0], 'long audio: every 30-s window in full');
});

test("a model with a smaller encoder context is never given more than it has (whisper.cpp would refuse it)", () => {
  assert.equal(encoderWindowFor('floor', 5, 1000), 768);
  assert.equal(encoderWindowFor('floor', 16, 1000), 0, 'a window of 1024 positions in a 1000-position model is its whole window');
  assert.equal(encoderWindowFor('shrink', 5, 300), 0);
  assert.equal(encoderWindowFor('tail', 1, 1000), 512);
  assert.equal(encoderWindowFor('tail', 5, 300), 0);
});
