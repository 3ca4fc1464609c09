// The `noise` panel's mixing (scripts/lib/noise-mix.ts): the level it
// promises, measured over the speech and not its pauses, the same noise for
// the same clip every run without a splice, and no clipping.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mixAtSnr, noiseOffset, speechPower } from '../../scripts/lib/noise-mix';

const power = (x: Float32Array) => x.reduce((s, v) => s + v * v, 0) / x.length;
const added = (mix: Float32Array, speech: Float32Array) => mix.map((v, i) => v - speech[i]);
const tone = (n: number, amplitude: number, period: number) => Float32Array.from({ length: n }, (_, i) => amplitude * Math.sin((2 * Math.PI * i) / period));
const dB = (ratio: number) => 10 * Math.log10(ratio);
/** A fixed pseudo-random noise: the same every run. */
const noiseOf = (n: number) => {
  let s = 7;
  return Float32Array.from({ length: n }, () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 0.6 - 0.3);
};

test('the noise is added at the promised ratio to the speech power given', () => {
  const speech = tone(16000, 0.2, 37);
  for (const snr of [0, 5, 20]) {
    const { samples, scaled } = mixAtSnr(speech, power(speech), noiseOf(20000), snr, 123);
    assert.equal(scaled, false);
    assert.ok(Math.abs(dB(power(speech) / power(added(samples, speech))) - snr) < 0.01, `${snr} dB`);
  }
});

test('speech power is taken over the sound, not the pauses', () => {
  const rate = 16000;
  const speaking = tone(rate, 0.2, 37);
  const withPause = new Float32Array(3 * rate);
  withPause.set(speaking, 0); // one second of sound, two of silence
  assert.ok(Math.abs(dB(speechPower(withPause, rate) / power(speaking))) < 0.1);
  assert.ok(dB(power(speaking) / power(withPause)) > 4.5); // the whole clip's power would give it 4.8 dB less noise
  assert.ok(Math.abs(speechPower(new Float32Array(rate), rate) - 1e-3) < 1e-9); // silent: -30 dBFS
});

test('the noise is taken from the offset, and looped only past its end', () => {
  const noise = noiseOf(1000);
  const speech = tone(2500, 0.1, 50);
  const n = added(mixAtSnr(speech, power(speech), noise, 5, 900).samples, speech);
  const gain = n[0] / noise[900];
  for (const i of [0, 99, 100, 1100, 2499]) assert.ok(Math.abs(n[i] - gain * noise[(900 + i) % 1000]) < 1e-5, `sample ${i}`);
});

test('a mix that would clip is scaled down whole to a peak of 0.99, its ratio kept', () => {
  const noise = noiseOf(9000);
  const quietSpeech = tone(8000, 0.1, 40);
  const loudSpeech = tone(8000, 0.98, 40);
  // Unclipped, a mix scales with its speech: the loud mix is the quiet one scaled up, then down to the peak.
  const quiet = mixAtSnr(quietSpeech, power(quietSpeech), noise, 0, 0);
  const loud = mixAtSnr(loudSpeech, power(loudSpeech), noise, 0, 0);
  const peakOf = (x: Float32Array) => x.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  assert.equal(quiet.scaled, false);
  assert.equal(loud.scaled, true);
  assert.ok(Math.abs(peakOf(loud.samples) - 0.99) < 1e-6);
  const k = 0.99 / peakOf(quiet.samples);
  assert.ok(loud.samples.every((v, i) => Math.abs(v - k * quiet.samples[i]) < 1e-5));
});

test('an empty or silent noise is refused', () => {
  assert.throws(() => mixAtSnr(tone(100, 0.1, 10), 0.005, new Float32Array(0), 5, 0), /empty/);
  assert.throws(() => mixAtSnr(tone(100, 0.1, 10), 0.005, new Float32Array(50), 5, 0), /silent/);
});

test('a clip\'s offset is fixed by its id, and a clip shorter than the noise hears it without a splice', () => {
  assert.equal(noiseOffset('ljspeech/LJ001-0001', 96000, 16000), noiseOffset('ljspeech/LJ001-0001', 96000, 16000));
  const ids = Array.from({ length: 200 }, (_, i) => `clip-${i}`);
  const offsets = ids.map((id) => noiseOffset(id, 96000, 80000));
  assert.ok(offsets.every((o) => o >= 0 && o + 80000 <= 96000));
  assert.ok(new Set(offsets).size > 150);
  assert.equal(noiseOffset('clip-1', 1000, 5000), 0); // longer than the noise: from its start, looped
});
