// The eval set's `noise` panel: every clip of the set with a real noise
// recording added at a fixed speech-to-noise ratio, so the set, which has no
// noisy speech of its own (issue 32, item 1), has a noisy counterpart whose
// references are the clips' own. Added, not recorded: the speaker does not
// raise their voice over the noise (no Lombard effect), there is no room in
// common, and it is one noise at one level, so the panel reads how
// each engine copes with that noise, not how every noisy recording sounds.
// The same noise, level and offsets for every engine and every run.
import { createHash } from 'node:crypto';
import { frameLevels, soundThreshold } from './speech-end';

/** Speech power (over the clip's sound frames) over noise power, in dB: dishes being washed near the microphone. */
export const NOISE_SNR_DB = 5;
/** How the panel is made, for reports to say. */
export const NOISE_RULE = `each clip with a real recording of dishes being washed (Google Speech Commands' background noise doing_the_dishes.wav, CC BY 4.0, from pyroomacoustics' examples) added at ${NOISE_SNR_DB} dB of speech power over noise power, the speech's power taken over the clip's sound frames (those the ends panel's threshold counts as sound, so pauses do not lower it), the noise taken from a point fixed by the clip's id`;
/** The loudest sample a mix may keep: a mix that would clip is scaled down whole, its ratio unchanged. */
const PEAK = 0.99;
/** The speech power assumed for a clip with no frame standing out of its floor: -30 dBFS. */
const FLAT_POWER = 10 ** (-30 / 10);

const power = (x: Float32Array): number => {
  let sum = 0;
  for (let i = 0; i < x.length; i++) sum += x[i] * x[i];
  return sum / Math.max(1, x.length);
};

/**
 * The speech's power: the mean of its sound frames' powers (scripts/lib/speech-end.ts's
 * threshold), so a clip with long pauses is not given less noise while someone speaks.
 * A flat clip (no frame stands out) has its whole power, or FLAT_POWER when silent.
 */
export function speechPower(samples: Float32Array, rate: number): number {
  const levels = frameLevels(samples, rate);
  const threshold = soundThreshold(levels);
  const sound = threshold === null ? [] : levels.filter((l) => l > threshold);
  if (sound.length === 0) return power(samples) || FLAT_POWER;
  return sound.reduce((s, l) => s + 10 ** (l / 10), 0) / sound.length;
}

/**
 * Where in the noise a clip's mix starts, fixed by the clip's id so every run
 * hears the same noise: within the noise's length less the clip's, so a clip
 * shorter than the noise hears one stretch of it without a splice.
 */
export function noiseOffset(id: string, noiseLength: number, clipLength: number): number {
  const room = Math.max(1, noiseLength - clipLength + 1);
  return createHash('sha256').update(id).digest().readUInt32BE(0) % room;
}

/**
 * `speech` with `noise` added from `offset` (looped only where the clip is
 * longer than the noise) at `snrDb` of `speechPower` over the noise's power
 * over the clip's length; `scaled` when the mix would have clipped and was
 * scaled down whole.
 */
export function mixAtSnr(speech: Float32Array, speechPowerOf: number, noise: Float32Array, snrDb: number, offset: number): { samples: Float32Array; scaled: boolean } {
  if (noise.length === 0) throw new Error('the noise recording is empty');
  const stretch = new Float32Array(speech.length);
  for (let i = 0; i < speech.length; i++) stretch[i] = noise[(offset + i) % noise.length];
  const noisePower = power(stretch);
  if (noisePower === 0) throw new Error('the noise recording is silent');
  const gain = Math.sqrt(speechPowerOf / (noisePower * 10 ** (snrDb / 10)));
  const samples = new Float32Array(speech.length);
  let peak = 0;
  for (let i = 0; i < speech.length; i++) {
    samples[i] = speech[i] + gain * stretch[i];
    peak = Math.max(peak, Math.abs(samples[i]));
  }
  if (peak > PEAK) for (let i = 0; i < samples.length; i++) samples[i] *= PEAK / peak;
  return { samples, scaled: peak > PEAK };
}
