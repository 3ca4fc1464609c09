// The rule that chooses the shipped default (benchmarks/lib/default-rule.ts):
// within 0.3 points of faster-whisper's default by the point estimate, a
// shrunk window only where its interval excludes a cost of 0.3, cheapest first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { holdingOf, windowCostsNothing, WITHIN_POINTS } from '../../benchmarks/lib/default-rule';

const reading = (wer: number, time: number, lo = wer - 1, hi = wer + 1) => ({ werDiff: [wer, lo, hi], timeRatio: [time, time * 0.9, time * 1.1] });
const candidate = (id: string, wer: number, time: number, window: { costsNothing: boolean } | null = null) => ({ id, b: reading(wer, time), window });

test('the candidates within 0.3 points hold, cheapest first; the bound itself holds', () => {
  assert.equal(WITHIN_POINTS, 0.3);
  const held = holdingOf([
    candidate('beam5', -0.2, 0.9),
    candidate('greedy', 0.3, 0.6),
    candidate('too-far', 0.31, 0.3),
  ]);
  assert.deepEqual(held.map((c) => c.id), ['greedy', 'beam5']);
});

test('a shrunk window holds only where its interval against the full window excludes a cost of 0.3', () => {
  const held = holdingOf([
    candidate('greedy-full', 0.1, 0.6),
    candidate('greedy-tail-cost-unexcluded', 0.0, 0.3, { costsNothing: false }),
    candidate('greedy-tail-free', 0.0, 0.4, { costsNothing: true }),
  ]);
  assert.deepEqual(held.map((c) => c.id), ['greedy-tail-free', 'greedy-full']);
  // The interval's upper end decides, strictly below 0.3: a point estimate of -1 with an upper end at 0.3 still cannot exclude the cost.
  assert.equal(windowCostsNothing(reading(-1, 0.5, -2, 0.3)), false);
  assert.equal(windowCostsNothing(reading(0.2, 0.5, -0.1, 0.29)), true);
});

test('none holds: an empty list (the eval then keeps beam 5 in the full window)', () => {
  assert.deepEqual(holdingOf([candidate('greedy', 0.5, 0.6), candidate('beam5', 0.4, 0.9)]), []);
  assert.deepEqual(holdingOf([]), []);
});
