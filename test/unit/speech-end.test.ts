// Where the eval's `ends` panel cuts a clip: the end of its last sound, read
// against the clip's own noise floor (scripts/lib/speech-end.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { frameLevels, soundEndSample } from '../../scripts/lib/speech-end';

const RATE = 16000;

/** Noise at `floor` amplitude, with a 200-Hz tone of `amplitude` from `from` to `to` seconds. */
function clip(seconds: number, floor: number, bursts: { from: number; to: number; amplitude: number }[]): Float32Array {
  const out = new Float32Array(seconds * RATE);
  let seed = 7;
  const noise = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
  for (let i = 0; i < out.length; i++) {
    const t = i / RATE;
    out[i] = floor * noise();
    for (const b of bursts) if (t >= b.from && t < b.to) out[i] += b.amplitude * Math.sin(2 * Math.PI * 200 * t);
  }
  return out;
}

test('a frame\'s level is its RMS in dB of full scale, silence -120', () => {
  const levels = frameLevels(Float32Array.from({ length: 320 }, (_, i) => (i < 160 ? 0 : 1)), RATE);
  assert.deepEqual(levels, [-120, 0]);
});

test('a clean clip is cut at the end of its last sound, not of its pause', () => {
  const samples = clip(3, 0.001, [{ from: 0.3, to: 1.2, amplitude: 0.3 }, { from: 1.5, to: 2.0, amplitude: 0.3 }]);
  const end = soundEndSample(samples, RATE);
  assert.ok(Math.abs(end / RATE - 2.0) <= 0.01, `cut at ${end / RATE} s`);
});

test('a noisy recording (20 dB from floor to speech) is cut at its speech, not in the noise', () => {
  const samples = clip(3, 0.03, [{ from: 0.2, to: 2.4, amplitude: 0.3 }]);
  const end = soundEndSample(samples, RATE);
  assert.ok(Math.abs(end / RATE - 2.4) <= 0.01, `cut at ${end / RATE} s`);
});

test('a soft last sound a quarter of the way above the floor is kept', () => {
  // Loud at 0.3 (about -13 dB), floor at 0.001 (about -65 dB); the last word's soft end at 0.01 (-43 dB) is above the quarter mark (-52 dB).
  const samples = clip(3, 0.001, [{ from: 0.2, to: 1.8, amplitude: 0.3 }, { from: 1.8, to: 2.1, amplitude: 0.01 }]);
  const end = soundEndSample(samples, RATE);
  assert.ok(Math.abs(end / RATE - 2.1) <= 0.01, `cut at ${end / RATE} s`);
});

test('a clip with no sound above its floor, or none at all, is left whole', () => {
  assert.equal(soundEndSample(clip(1, 0.01, []), RATE), RATE);
  assert.equal(soundEndSample(new Float32Array(RATE), RATE), RATE);
  assert.equal(soundEndSample(new Float32Array(10), RATE), 10);
});
