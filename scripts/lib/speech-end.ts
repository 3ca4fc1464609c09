// Where a clip's sound ends, from its own loudness: the end of the last
// 10-ms frame clearly above the clip's noise floor. The eval set's `ends`
// panel cuts its clips there, so their speech runs to the last sample: a
// recording that stops on a word is where an engine drops the last one, and
// the corpora's clips nearly all end in a pause (issue 32, item 1).
// Relative to each clip, not a fixed level: the corpora are recorded from
// 20 to 50 dB above their floors.

const FRAME_SECONDS = 0.01;
/** The clip's noise floor and loud end: percentiles of its frames' levels. */
const FLOOR_PERCENTILE = 10;
const LOUD_PERCENTILE = 99;
/** Where between the floor and the loud end a frame counts as sound. */
const SOUND_FRACTION = 0.25;
/** A clip joins the ends panel when the cut removes at least this much: under it the clip already ends on its sound. */
export const ENDS_MIN_CUT_SECONDS = 0.2;
/** How the panel is cut, for reports to say. */
export const ENDS_RULE = `each clip cut at the end of its last ${FRAME_SECONDS * 1000}-ms frame louder than ${SOUND_FRACTION * 100} % of the way from its noise floor (the ${FLOOR_PERCENTILE}th percentile of its frames' levels) to its loud end (the ${LOUD_PERCENTILE}th), where that removes ${ENDS_MIN_CUT_SECONDS} s or more`;

/** Each 10-ms frame's RMS level in dB of full scale (samples in -1..1); silence reads -120. */
export function frameLevels(samples: Float32Array, rate: number): number[] {
  const frame = Math.round(rate * FRAME_SECONDS);
  const levels: number[] = [];
  for (let at = 0; at + frame <= samples.length; at += frame) {
    let sum = 0;
    for (let i = at; i < at + frame; i++) sum += samples[i] * samples[i];
    levels.push(Math.max(-120, 10 * Math.log10(sum / frame)));
  }
  return levels;
}

// Not benchmarks/lib/stats.ts's percentile (another rank rule): the panel's cut points are pinned by this one.
const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/**
 * The level (dB) a frame must pass to count as sound: a quarter of the way
 * from the clip's floor (the quietest tenth of its frames) to its loud end
 * (the 99th percentile). Null for a flat clip, where no sound stands 6 dB
 * out of the floor.
 */
export function soundThreshold(levels: number[]): number | null {
  if (levels.length === 0) return null;
  const sorted = [...levels].sort((a, b) => a - b);
  const floor = percentile(sorted, FLOOR_PERCENTILE);
  const loud = percentile(sorted, LOUD_PERCENTILE);
  return loud - floor < 6 ? null : floor + (loud - floor) * SOUND_FRACTION;
}

/**
 * The sample count up to the end of the last frame louder than the floor (the
 * quietest tenth of the frames) by a quarter of the way to the loud end (the
 * 99th percentile): a quarter keeps a soft last consonant in noisy recordings
 * (a 20-dB range leaves 5 dB) and in clean ones stops above breath and hum.
 * The whole clip when it has no such frame (a flat recording).
 */
export function soundEndSample(samples: Float32Array, rate: number): number {
  const levels = frameLevels(samples, rate);
  const threshold = soundThreshold(levels);
  if (threshold === null) return samples.length;
  for (let f = levels.length - 1; f >= 0; f--) {
    if (levels[f] > threshold) return Math.min(samples.length, (f + 1) * Math.round(rate * FRAME_SECONDS));
  }
  return samples.length;
}
