export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
export const percentile = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};
export const fmt = (x: number, digits = 1): string => (Number.isFinite(x) ? x.toFixed(digits) : '—');
export const range = (xs: number[], digits = 1): string => `${fmt(Math.min(...xs), digits)}–${fmt(Math.max(...xs), digits)}`;

/**
 * A distribution-free confidence interval for the median: the k-th smallest
 * and k-th largest of n values, with k the largest rank whose binomial tail
 * P(Binomial(n, 1/2) < k) stays within (1 - level) / 2. Needs no assumption
 * about this VM's noise; with 8 values it is the min–max (99 %).
 */
export function medianInterval(xs: number[], level = 0.95): [number, number] {
  const { lo, hi } = medianIntervalWithCoverage(xs, level);
  return [lo, hi];
}

/**
 * The same interval with its true coverage: with few values the k-th
 * smallest and largest cover more than asked (min–max of 5 values: 93.75 %,
 * of 3: 75 %), and fewer than 6 values cannot reach 95 % at all (then the
 * min–max, with what it covers).
 */
export function medianIntervalWithCoverage(xs: number[], level = 0.95): { lo: number; hi: number; coverage: number } {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  let tail = 0;
  let k = 1;
  let kTail = 0.5 ** n; // P(Binomial(n, 1/2) < 1): the min–max misses the median with twice this
  for (let i = 0, p = 0.5 ** n; i < n; i++) {
    if (tail + p > (1 - level) / 2) break;
    tail += p;
    k = i + 1;
    kTail = tail;
    p = (p * (n - i)) / (i + 1);
  }
  return { lo: s[k - 1], hi: s[n - k], coverage: 1 - 2 * kTail };
}

/** Mulberry32, a small seeded generator: the same schedules and intervals on every run of the same data. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
