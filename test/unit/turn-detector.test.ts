// server_vad's turn edges from Silero's probabilities (src/http/realtime/turn-detector.ts):
// speech starts at the first frame at the threshold, stops after silence_duration_ms
// of frames under the threshold less 0.15, and a voice hovering between the two
// neither ends the turn nor starts another.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SERVER_VAD_DEFAULTS, TurnDetector } from '../../src/http/realtime/turn-detector';

const FRAME_MS = 32;
const frames = (p: number, n: number) => Array<number>(n).fill(p);

test('a turn starts at the first frame at the threshold and stops after silence_duration_ms of silence', () => {
  const d = new TurnDetector(SERVER_VAD_DEFAULTS, FRAME_MS);
  // 500 ms of silence is 16 frames of 32 ms (rounded up).
  assert.deepEqual(d.feed([...frames(0.1, 10), 0.5, ...frames(0.9, 20)]), [{ type: 'started', frame: 10 }]);
  assert.equal(d.inSpeech, true);
  assert.deepEqual(d.feed(frames(0.05, 15)), []);
  assert.deepEqual(d.feed(frames(0.05, 1)), [{ type: 'stopped', frame: 47 }]);
  assert.equal(d.inSpeech, false);
  // The next speech is the next turn, the frame count going on.
  assert.deepEqual(d.feed([0.2, 0.7]), [{ type: 'started', frame: 48 }]);
});

test('a pause shorter than silence_duration_ms, or a voice between the two thresholds, does not end the turn', () => {
  const d = new TurnDetector({ ...SERVER_VAD_DEFAULTS, silence_duration_ms: 320 }, FRAME_MS);
  assert.equal(d.feed([0.8]).length, 1);
  // 9 frames of silence (288 ms), speech again: one turn.
  assert.deepEqual(d.feed([...frames(0.1, 9), 0.8, ...frames(0.1, 9), 0.8]), []);
  // 0.4 is under 0.5 but not under 0.35: neither speech nor silence, for as long as it lasts.
  assert.deepEqual(d.feed(frames(0.4, 100)), []);
  // Silence after hovering: counted from its first frame.
  assert.deepEqual(d.feed(frames(0.1, 10)), [{ type: 'stopped', frame: 1 + 20 + 100 + 10 }]);
});

test('the threshold is the session\'s, and restart() makes continuing speech a new turn', () => {
  const d = new TurnDetector({ ...SERVER_VAD_DEFAULTS, threshold: 0.9 }, FRAME_MS);
  assert.deepEqual(d.feed(frames(0.85, 50)), []);
  assert.deepEqual(d.feed([0.95, 0.95]), [{ type: 'started', frame: 50 }]);
  d.restart();
  assert.equal(d.inSpeech, false);
  assert.deepEqual(d.feed([0.95]), [{ type: 'started', frame: 52 }]);
});
