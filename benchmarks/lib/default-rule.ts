// The rule that chooses the shipped default (issue 32, item 6), as set before
// measuring: of our configurations, the cheapest whose WER is within
// WITHIN_POINTS of faster-whisper's default; a window other than `full` only
// where its interval against the same decoding in the full window excludes a
// cost of WITHIN_POINTS; if none holds, beam 5 in the full window.
// benchmarks/eval.ts reads it against this run's reference and a pooled one.

export const WITHIN_POINTS = 0.3;

/** A paired bootstrap's reading: [point, low, high] of the WER difference (points) and of the time ratio. */
export interface Reading {
  werDiff: number[];
  timeRatio: number[];
}

/** Whether a window's interval against the full window (this config minus full) excludes a cost of WITHIN_POINTS. */
export const windowCostsNothing = (againstFull: Reading): boolean => againstFull.werDiff[2] < WITHIN_POINTS;

/**
 * The candidates that hold, cheapest first: `b` is each one against the
 * reference; `window` null for the full window, else whether its cost was excluded.
 */
export function holdingOf<T extends { b: Reading; window: { costsNothing: boolean } | null }>(candidates: T[]): T[] {
  return candidates
    .filter((c) => c.b.werDiff[0] <= WITHIN_POINTS && (c.window === null || c.window.costsNothing))
    .sort((x, y) => x.b.timeRatio[0] - y.b.timeRatio[0]);
}
