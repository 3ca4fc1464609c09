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
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  let tail = 0;
  let k = 1;
  for (let i = 0, p = 0.5 ** n; i < n; i++) {
    if (tail + p > (1 - level) / 2) break;
    tail += p;
    k = i + 1;
    p = (p * (n - i)) / (i + 1);
  }
  return [s[k - 1], s[n - k]];
}
