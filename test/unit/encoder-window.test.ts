// The encoder window each policy gives a clip (audio_ctx; 0 is the full 30 s).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encoderWindowFor } from '../../src/stt/local/encoder-window';

test('full is always the whole window; shrink fits the clip plus 64 positions; floor fits it but never under 15 s', () => {
  const at = (seconds: number) => ['full', 'floor', 'shrink'].map((p) => encoderWindowFor(p as 'full', seconds));
  assert.deepEqual(at(1), [0, 750, 114]);
  assert.deepEqual(at(5), [0, 750, 314]);
  assert.deepEqual(at(13.72), [0, 750, 750], 'where the clip meets the floor');
  assert.deepEqual(at(20), [0, 1064, 1064]);
  assert.deepEqual(at(28.72), [0, 0, 0], 'a fit of 1500 or more is the full window');
  assert.deepEqual(at(30), [0, 0, 0]);
  assert.deepEqual(at(600), [0, 0, 0], 'long audio: every 30-s window in full');
});
