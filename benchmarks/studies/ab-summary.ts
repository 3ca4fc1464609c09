// Summarises barrier-ab.sh's output (lines "CONDITION unpatched S patched S",
// one per round): per condition, the medians, patched ÷ unpatched within each
// round with the median's 95 % bootstrap interval (2,000 resamples, seeded),
// and how many rounds the patched build was faster; then the raw lines.
// Usage: npx tsx benchmarks/studies/ab-summary.ts < barrier-ab.log
import { readFileSync } from 'node:fs';
import { median, seededRandom } from '../lib/stats.js';

const rounds = new Map<string, { before: number; after: number }[]>();
const raw = readFileSync(0, 'utf8').split('\n').filter((line) => line.trim());
for (const line of raw) {
  const m = /^(\S+) unpatched ([\d.]+) patched ([\d.]+)$/.exec(line.trim());
  if (!m) throw new Error(`not a barrier-ab.sh line: ${line}`);
  const list = rounds.get(m[1]) ?? [];
  list.push({ before: Number(m[2]), after: Number(m[3]) });
  rounds.set(m[1], list);
}

function bootstrapMedian(xs: number[], resamples = 2000): [number, number] {
  const random = seededRandom(1);
  const medians = Array.from({ length: resamples }, () => median(xs.map(() => xs[Math.floor(random() * xs.length)])));
  medians.sort((a, b) => a - b);
  return [medians[Math.floor(0.025 * resamples)], medians[Math.ceil(0.975 * resamples) - 1]];
}

console.log('| condition | unpatched, s (median) | patched, s | patched ÷ unpatched (95 % CI) | rounds patched faster |');
console.log('| --- | --- | --- | --- | --- |');
for (const [condition, list] of rounds) {
  const ratios = list.map((r) => r.after / r.before);
  const [lo, hi] = bootstrapMedian(ratios);
  const faster = list.filter((r) => r.after < r.before).length;
  console.log(
    `| ${condition} | ${median(list.map((r) => r.before)).toFixed(2)} | ${median(list.map((r) => r.after)).toFixed(2)} | ` +
      `${median(ratios).toFixed(3)} (${lo.toFixed(3)} .. ${hi.toFixed(3)}) | ${faster} of ${list.length} |`,
  );
}
console.log('\nRaw (wall seconds, in run order):\n\n```\n' + raw.join('\n') + '\n```');
