import { test } from 'node:test';
import assert from 'node:assert/strict';
import { alignErrors, errorCount, failuresOf, meanOverRuns, medianClipRatio, pairedBootstrap, partsFound, scoreAnswer, scoringWords } from '../../benchmarks/lib/scoring';
import { seededRandom } from '../../benchmarks/lib/stats';
import { wordErrors } from '../../scripts/lib/english-normalizer';
import { splitOf } from '../../scripts/eval-set';

const w = (s: string) => s.split(' ').filter(Boolean);

test('alignment splits the edit distance into substitutions, deletions and insertions', () => {
  assert.deepEqual(alignErrors(w('a b c d'), w('a b c d')), { sub: 0, del: 0, ins: 0, words: 4 });
  assert.deepEqual(alignErrors(w('a b c d'), w('a x c d')), { sub: 1, del: 0, ins: 0, words: 4 });
  assert.deepEqual(alignErrors(w('a b c d'), w('a c d')), { sub: 0, del: 1, ins: 0, words: 4 });
  assert.deepEqual(alignErrors(w('a b c d'), w('a b y c d z')), { sub: 0, del: 0, ins: 2, words: 4 });
  assert.deepEqual(alignErrors(w('a b'), []), { sub: 0, del: 2, ins: 0, words: 2 });
  assert.deepEqual(alignErrors([], w('a b')), { sub: 0, del: 0, ins: 2, words: 0 });
  // The total always equals the plain edit distance.
  const rand = seededRandom(7);
  const words = ['a', 'b', 'c', 'd'];
  for (let n = 0; n < 200; n++) {
    const pick = () => Array.from({ length: Math.floor(rand() * 8) }, () => words[Math.floor(rand() * 4)]);
    const [ref, hyp] = [pick(), pick()];
    assert.equal(errorCount(alignErrors(ref, hyp)), wordErrors(ref, hyp).errors, `${ref} / ${hyp}`);
  }
});

test('non-English text is scored with case and punctuation folded, not the English rules', () => {
  assert.deepEqual(scoringWords('Testar en, två tre!', 'sv'), ['testar', 'en', 'två', 'tre']);
  assert.deepEqual(scoringWords('Ten dogs.', 'en'), ['10', 'dogs']);
  assert.deepEqual(scoringWords('甚至 出现，交易', 'zh'), ['甚', '至', '出', '现', '交', '易']);
});

test('Chinese is scored in Simplified script: the same words in Traditional characters are no errors', () => {
  // Whisper base wrote this clip both ways from one build to the next.
  const reference = '为了规避三四线城市明显过剩的市场风险';
  assert.deepEqual(scoringWords('為了規避三四線城市明顯過剩的市場風險。', 'zh'), scoringWords(reference, 'zh'));
  assert.deepEqual(scoreAnswer(reference, '為了規避三四線成是明顯過剩的市場風險。', 'zh').errors, { sub: 2, del: 0, ins: 0, words: 18 });
  // Other languages keep their characters.
  assert.deepEqual(scoringWords('為了', 'ja'), ['為了']);
});

test('failures: loops, overlong and empty answers, and a lost last word', () => {
  const ref = w('the cat sat on the mat');
  assert.deepEqual(failuresOf(ref, ref), { loop: false, long: false, empty: false, lastWordMissing: false });
  assert.equal(failuresOf(ref, w('on the mat on the mat on the mat on the mat')).loop, true);
  assert.equal(failuresOf(ref, w('on the mat on the mat')).loop, false);
  assert.equal(failuresOf(ref, w('the cat sat on the mat and then it sat')).long, true);
  assert.equal(failuresOf(ref, []).empty, true);
  assert.equal(failuresOf(ref, w('the cat sat on the')).lastWordMissing, true);
});

test('paired bootstrap: no difference between identical systems, a clear one between different ones', () => {
  const a = Array.from({ length: 50 }, (_, i) => ({ errors: i % 5, words: 20, ms: 100 }));
  const same = pairedBootstrap(a, a, 500);
  assert.deepEqual(same.werDiff, [0, 0, 0]);
  assert.deepEqual(same.timeRatio, [1, 1, 1]);
  const worse = a.map((x) => ({ ...x, errors: x.errors + 1, ms: 200 }));
  const d = pairedBootstrap(worse, a, 500);
  assert.ok(Math.abs(d.werDiff[0] - 5) < 1e-9); // one more error in 20 words on every clip
  assert.ok(d.werDiff[1] <= 5 + 1e-9 && d.werDiff[2] >= 5 - 1e-9);
  assert.equal(d.timeRatio[0], 2);
  // A noisy difference has an interval that spans its point value and is seeded.
  const noisy = a.map((x, i) => ({ ...x, errors: x.errors + (i % 3 === 0 ? 2 : -0) }));
  const n1 = pairedBootstrap(noisy, a, 500, 3);
  assert.ok(n1.werDiff[1] < n1.werDiff[0] && n1.werDiff[0] < n1.werDiff[2]);
  assert.deepEqual(pairedBootstrap(noisy, a, 500, 3), n1);
});

test('the eval set split is fixed by the clip id and puts clips on both sides', () => {
  const ids = Array.from({ length: 200 }, (_, i) => `src/clip-${i}`);
  const sides = ids.map(splitOf);
  const dev = sides.filter((s) => s === 'dev').length;
  assert.ok(dev > 70 && dev < 130, `${dev} of 200 on dev`);
  // Clips whose half the committed reports record: a change to the split would move them (and every report's clips).
  const recorded: [string, 'dev' | 'test'][] = [
    ['commonvoice/common_voice_en_18933160', 'test'],
    ['commonvoice/common_voice_en_22060973', 'dev'],
    ['mfa/falsetto2', 'dev'],
    ['mfa/mfa_affectation', 'dev'],
    ['mfa/61-70968-0000', 'test'],
    ['mfa/cold_corpus', 'test'],
  ];
  for (const [id, half] of recorded) assert.equal(splitOf(id), half, id);
});

test('speech joined across a pause: the share of each part the answer holds, from one alignment', () => {
  const a = w('he began a confused complaint against the wizard');
  const b = w('it was a bright cold day in april');
  assert.deepEqual(partsFound([...a, ...b], a, b), { foundA: 1, foundB: 1 });
  assert.deepEqual(partsFound(a, a, b), { foundA: 1, foundB: 0 }); // B lost, as greedy lost JFK's second sentence
  assert.deepEqual(partsFound(b, a, b), { foundA: 0, foundB: 1 });
  assert.deepEqual(partsFound([], a, b), { foundA: 0, foundB: 0 });
  assert.deepEqual(partsFound(w('he began a complaint it was cold'), a, b), { foundA: 4 / 8, foundB: 3 / 8 });
  // A word both parts say counts for the part measured: an answer holding only A, whose last word
  // B says first, keeps all of A and a quarter of B, whichever end the alignment is traced from.
  assert.deepEqual(partsFound(w('x y z w'), w('x y z w'), w('w q r s')), { foundA: 1, foundB: 1 / 4 });
  assert.deepEqual(partsFound(w('w q r s'), w('x y z w'), w('w q r s')), { foundA: 1 / 4, foundB: 1 });
  // The same sentence twice, answered once: either part may claim it, so neither reads as lost.
  const jfk = w('ask not what your country can do for you');
  assert.deepEqual(partsFound(jfk, jfk, jfk), { foundA: 1, foundB: 1 });
});

test('a sampling reference pooled over its runs: the mean errors per clip, this run\'s times, the same clips required', () => {
  const run = (errors: number[], ms = 100) => errors.map((e, i) => ({ errors: e, words: 10 + i, ms }));
  const pooled = meanOverRuns([run([1, 0, 4]), run([3, 0, 40]), run([2, 3, 4])], run([0, 0, 0], 7));
  assert.deepEqual(pooled, [{ errors: 2, words: 10, ms: 7 }, { errors: 1, words: 11, ms: 7 }, { errors: 16, words: 12, ms: 7 }]);
  assert.throws(() => meanOverRuns([run([1, 0])], run([0, 0, 0])), /not of the same clips/);
  assert.throws(() => meanOverRuns([[{ errors: 1, words: 9, ms: 1 }]], run([0])), /not of the same clips/);
  assert.throws(() => meanOverRuns([], run([0])), /no runs/);
});

test('the median clip ratio reads the clip in the middle, not the totals a few slow clips sway', () => {
  const b = Array.from({ length: 30 }, () => ({ errors: 0, words: 10, ms: 100 }));
  // Every clip 0.8x, except three where b took 10x as long (as faster-whisper's extra windows do).
  const slow = b.map((x, i) => ({ ...x, ms: i < 3 ? 1000 : 100 }));
  const a = b.map((x) => ({ ...x, ms: 80 }));
  const m = medianClipRatio(a, slow);
  assert.ok(Math.abs(m.median - 0.8) < 1e-12);
  // The interval ignores the three slow clips too: the ranks around the middle are all 0.8.
  assert.deepEqual([m.lo, m.hi], [0.8, 0.8]);
  assert.ok(m.coverage >= 0.95);
  assert.equal(medianClipRatio(a.slice(0, 3), slow.slice(0, 3)).coverage, 0.75); // three clips: the min–max, 75 %
  assert.ok(pairedBootstrap(a, slow, 200).timeRatio[0] < 0.45); // the totals say far less
  assert.throws(() => medianClipRatio(a, slow.slice(1)), /same clips/);
});
