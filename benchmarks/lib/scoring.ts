// Scoring for `npm run eval`: word errors split into substitutions, deletions
// and insertions; the failures a corpus WER hides; and paired bootstrap
// intervals, so a difference between two systems is read with its
// uncertainty over the clips. Pure functions, unit-tested
// (test/unit/eval-scoring.test.ts).
import * as OpenCC from 'opencc-js';
import { normalizeEnglish } from '../../scripts/lib/english-normalizer';
import { median, medianIntervalWithCoverage, seededRandom } from './stats';

export interface Errors { sub: number; del: number; ins: number; words: number }

// Whisper writes Mandarin in Simplified or Traditional characters from one
// decode to the next (same audio, same language); the references are in
// Simplified. The script is no recognition error, so both sides are folded to
// Simplified (OpenCC's character tables, as Chinese ASR scoring usually does).
const toSimplified = OpenCC.Converter({ from: 't', to: 'cn' });

/** Words for scoring: Whisper's English normaliser for English, characters in Simplified script for Chinese, otherwise case and punctuation folded. */
export function scoringWords(text: string, language: string): string[] {
  if (language === 'zh') return [...toSimplified(text.normalize('NFKC')).replace(/[^\p{L}\p{N}]+/gu, '')];
  const s = language === 'en' ? normalizeEnglish(text) : text.toLowerCase().normalize('NFKC').replace(/[^\p{L}\p{N}']+/gu, ' ');
  return s.split(/\s+/).filter(Boolean);
}

/**
 * Levenshtein alignment of words, counting each kind of error. Among
 * alignments of equal cost it prefers substitutions; sclite weighs a
 * substitution 4 and an insertion or deletion 3, so where both fit it counts
 * a deletion and an insertion instead of two substitutions: the totals agree,
 * the split may not.
 */
export function alignErrors(ref: string[], hyp: string[]): Errors {
  type Cell = { cost: number; sub: number; del: number; ins: number };
  let prev: Cell[] = Array.from({ length: hyp.length + 1 }, (_, j) => ({ cost: j, sub: 0, del: 0, ins: j }));
  for (let i = 1; i <= ref.length; i++) {
    const row: Cell[] = [{ cost: i, sub: 0, del: i, ins: 0 }];
    for (let j = 1; j <= hyp.length; j++) {
      const same = ref[i - 1] === hyp[j - 1];
      const diag = prev[j - 1];
      const up = prev[j];
      const left = row[j - 1];
      const viaDiag = diag.cost + (same ? 0 : 1);
      if (viaDiag <= up.cost + 1 && viaDiag <= left.cost + 1) row.push({ cost: viaDiag, sub: diag.sub + (same ? 0 : 1), del: diag.del, ins: diag.ins });
      else if (up.cost <= left.cost) row.push({ cost: up.cost + 1, sub: up.sub, del: up.del + 1, ins: up.ins });
      else row.push({ cost: left.cost + 1, sub: left.sub, del: left.del, ins: left.ins + 1 });
    }
    prev = row;
  }
  const last = prev[hyp.length];
  return { sub: last.sub, del: last.del, ins: last.ins, words: ref.length };
}

export const errorCount = (e: Errors): number => e.sub + e.del + e.ins;

/** The ways an answer fails that a corpus WER averages away. */
export interface Failures { loop: boolean; long: boolean; empty: boolean; lastWordMissing: boolean }

/** An answer scored against its clip's reference text: its word errors and failures. */
export function scoreAnswer(reference: string, answer: string, language: string): { errors: Errors; failures: Failures } {
  const [ref, hyp] = [scoringWords(reference, language), scoringWords(answer, language)];
  return { errors: alignErrors(ref, hyp), failures: failuresOf(ref, hyp) };
}

export function failuresOf(ref: string[], hyp: string[]): Failures {
  const grams = new Map<string, number>();
  for (let i = 0; i + 4 <= hyp.length; i++) {
    const g = hyp.slice(i, i + 4).join(' ');
    grams.set(g, (grams.get(g) ?? 0) + 1);
  }
  return {
    loop: [...grams.values()].some((n) => n >= 3), // a 4-gram repeated 3 or more times
    long: hyp.length > 1.5 * ref.length,
    empty: hyp.length === 0 && ref.length > 0,
    lastWordMissing: ref.length > 0 && !hyp.slice(-3).includes(ref[ref.length - 1]),
  };
}

/**
 * One longest-common-subsequence alignment of an answer against A + B, traced
 * back from the end, taking a match wherever it can: the shares of A's and of
 * B's words it matches. A word both parts say can go to either.
 */
function creditFromEnd(answer: string[], a: string[], b: string[]): [number, number] {
  const ref = [...a, ...b];
  const dp = Array.from({ length: answer.length + 1 }, () => new Array<number>(ref.length + 1).fill(0));
  for (let i = 1; i <= answer.length; i++) {
    for (let j = 1; j <= ref.length; j++) dp[i][j] = answer[i - 1] === ref[j - 1] ? dp[i - 1][j - 1] + 1 : Math.max(dp[i - 1][j], dp[i][j - 1]);
  }
  let [inA, inB] = [0, 0];
  for (let i = answer.length, j = ref.length; i > 0 && j > 0;) {
    if (answer[i - 1] === ref[j - 1] && dp[i][j] === dp[i - 1][j - 1] + 1) {
      if (j <= a.length) inA++;
      else inB++;
      i--;
      j--;
    } else if (dp[i - 1][j] === dp[i][j]) i--;
    else j--;
  }
  return [inA / a.length, inB / b.length];
}

/**
 * For speech joined as A, a pause, B: the share of A's and of B's words an
 * answer holds. The alignment is traced from the end and, on the reversed
 * words, from the start; each part gets the larger of its two shares, so a
 * word both parts say counts for the part being measured, and a part is read
 * as lost only when it is lost either way.
 */
export function partsFound(answer: string[], a: string[], b: string[]): { foundA: number; foundB: number } {
  const [endA, endB] = creditFromEnd(answer, a, b);
  const rev = (w: string[]) => [...w].reverse();
  const [startB, startA] = creditFromEnd(rev(answer), rev(b), rev(a));
  return { foundA: Math.max(endA, startA), foundB: Math.max(endB, startB) };
}

export interface PerClip { errors: number; words: number; ms: number }

/** The corpus WER of scored clips, in percent: all their errors over all their reference words. */
export const corpusWer = (xs: PerClip[]): number => (100 * xs.reduce((s, x) => s + x.errors, 0)) / xs.reduce((s, x) => s + x.words, 0);

/** One clip's scored run (as the eval saves it) in the form the bootstrap reads. */
export const toPerClip = (r: { errors: Errors; ms: number }): PerClip => ({ errors: errorCount(r.errors), words: r.errors.words, ms: r.ms });

/**
 * A reference that samples (faster-whisper's temperature fallback) scores
 * differently from run to run; its expected errors on each clip are the mean
 * over its runs. `runs` are its saved runs on the same clips, in the same
 * order; the times are `times`' (one run's, so that a time ratio stays within
 * one run).
 */
export function meanOverRuns(runs: PerClip[][], times: PerClip[]): PerClip[] {
  if (runs.length === 0) throw new Error('no runs to pool');
  return times.map((t, i) => {
    if (runs.some((r) => r.length !== times.length || r[i].words !== t.words)) throw new Error(`clip ${i}: the runs are not of the same clips`);
    return { errors: runs.reduce((s, r) => s + r[i].errors, 0) / runs.length, words: t.words, ms: t.ms };
  });
}

const wer = (xs: PerClip[], idx: number[]): number => {
  let e = 0;
  let w = 0;
  for (const i of idx) { e += xs[i].errors; w += xs[i].words; }
  return w ? e / w : 0;
};
const time = (xs: PerClip[], idx: number[]): number => idx.reduce((s, i) => s + xs[i].ms, 0);

const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))))];

/**
 * Paired bootstrap over clips: `a` and `b` are the same clips in the same
 * order, scored for two systems. Resamples clips with replacement and gives
 * the point value and 95 % interval of WER(a) - WER(b) (in points) and of
 * time(a) ÷ time(b).
 */
export function pairedBootstrap(a: PerClip[], b: PerClip[], rounds = 2000, seed = 1): { werDiff: [number, number, number]; timeRatio: [number, number, number] } {
  if (a.length !== b.length) throw new Error('paired bootstrap needs the same clips on both sides');
  const all = a.map((_, i) => i);
  const rand = seededRandom(seed);
  const diffs: number[] = [];
  const ratios: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const idx = all.map(() => Math.floor(rand() * all.length));
    diffs.push(100 * (wer(a, idx) - wer(b, idx)));
    ratios.push(time(a, idx) / time(b, idx));
  }
  diffs.sort((x, y) => x - y);
  ratios.sort((x, y) => x - y);
  return {
    werDiff: [100 * (wer(a, all) - wer(b, all)), quantile(diffs, 0.025), quantile(diffs, 0.975)],
    timeRatio: [time(a, all) / time(b, all), quantile(ratios, 0.025), quantile(ratios, 0.975)],
  };
}

/**
 * The typical clip's time ratio: the median over clips of a's time ÷ b's, with
 * its distribution-free 95 % interval. The bootstrap above reads total times,
 * which a few slow clips on one side can sway (faster-whisper encodes a second
 * window on some clips under 30 s, and falls back to higher temperatures on
 * murmured clips that ours passes at 0); this reads the clip in the middle. Under 6 clips the interval is the min–max, which
 * covers less than 95 % (`coverage` says how much).
 */
export function medianClipRatio(a: PerClip[], b: PerClip[]): { median: number; lo: number; hi: number; coverage: number } {
  if (a.length !== b.length || a.length === 0) throw new Error('a median clip ratio needs the same clips on both sides');
  const ratios = a.map((x, i) => x.ms / b[i].ms);
  return { median: median(ratios), ...medianIntervalWithCoverage(ratios) };
}
