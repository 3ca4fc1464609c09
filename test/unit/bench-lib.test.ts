// The benchmark's own logic: the Poisson schedules, the output check and the
// interval coverage it labels, so a report cannot quietly say more than its data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mixes, poisson, POISSON_LENGTHS } from '../../benchmarks/lib/mixes';
import { OutputCheck } from '../../benchmarks/lib/outputs';
import { medianIntervalWithCoverage } from '../../benchmarks/lib/stats';
import { figures } from '../../benchmarks/lib/load';
import { nameFlag, numberOption, optionValue, reportSuffix } from '../../benchmarks/lib/args';
import { decodingName } from '../../benchmarks/lib/decoding';
import { commitState, uncommittedOf } from '../../benchmarks/lib/provenance';
import { report } from '../../benchmarks/lib/report';
import type { BenchMeta, ContentionDecoding, ShapeResult } from '../../benchmarks/lib/bench-types';

const SERVICE = { 5: 1000, 30: 3000, 120: 12000 };

test('a Poisson schedule offers exactly its load, holds every length of the set, and is the same every run', () => {
  for (const load of [0.7, 0.9]) {
    const a = poisson(load, SERVICE, 7);
    assert.deepEqual([...a.map((x) => x.seconds)].sort((x, y) => x - y), [...POISSON_LENGTHS].sort((x, y) => x - y));
    const work = a.reduce((sum, x) => sum + SERVICE[x.seconds as 5 | 30 | 120], 0);
    assert.ok(Math.abs(work / a[a.length - 1].atMs - load) < 0.001);
    assert.deepEqual(poisson(load, SERVICE, 7), a);
    assert.ok(a.every((x, i) => i === 0 || x.atMs >= a[i - 1].atMs));
  }
  assert.deepEqual(mixes(SERVICE).map((m) => m.name), ['long first', 'short first', 'all short', 'all long', 'poisson 70 %', 'poisson 90 %']);
});

test('the output check flags differing tokens, or differing text where a side has no tokens', () => {
  const check = new OutputCheck();
  check.record('m', 5, 'ours', { text: ' a b', tokens: [1, 2] });
  check.record('m', 5, 'server', { text: 'a  b', tokens: [1, 2] });
  check.record('m', 5, 'cli', { text: 'ab', tokens: null });
  assert.equal(check.mismatches.length, 0);
  check.record('m', 5, 'server', { text: ' a b', tokens: [1, 3] });
  check.record('m', 5, 'cli', { text: 'a c', tokens: null });
  assert.deepEqual(check.mismatches.map((m) => [m.other, m.what]), [['server', 'tokens'], ['cli', 'text']]);
  check.record('other model', 5, 'server', { text: 'x', tokens: [9] }); // its own reference
  assert.equal(check.mismatches.length, 2);
});

test('intervals state their true coverage', () => {
  assert.deepEqual(medianIntervalWithCoverage([3, 1, 2]), { lo: 1, hi: 3, coverage: 0.75 });
  assert.equal(medianIntervalWithCoverage([1, 2, 3, 4, 5]).coverage, 0.9375);
  const ten = medianIntervalWithCoverage([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  assert.deepEqual([ten.lo, ten.hi], [2, 9]);
  assert.ok(Math.abs(ten.coverage - (1 - 2 * 11 / 1024)) < 1e-12);
});

test('round figures split short and long clips, call the largest a max, and count refusals', () => {
  const f = figures({
    mix: 'x', contender: 'c', makespanS: 10, peakRssBytes: 5e8,
    requests: [
      { seconds: 5, atMs: 0, ms: 1000 }, { seconds: 5, atMs: 0, ms: 3000 }, { seconds: 30, atMs: 0, ms: 2000 },
      { seconds: 120, atMs: 0, ms: 9000 }, { seconds: 120, atMs: 0, ms: null, status: 503 },
    ],
  });
  assert.deepEqual(f, { shortP50: 2000, shortMax: 3000, longP50: 9000, longMax: 9000, meanMs: 3750, makespanS: 10, throughput: 16, refused: 1, peakRssMb: 500 });
});

test('a report name\'s suffix: none without --name, and a flag without its value is an error', () => {
  assert.equal(reportSuffix(['--rounds', '3']), '');
  assert.equal(reportSuffix(['--name', 'panel-loop', '--rounds', '3']), '-panel-loop');
  assert.throws(() => reportSuffix(['--rounds', '3', '--name']), /--name needs a value/);
  assert.throws(() => reportSuffix(['--name', '--rounds', '3']), /--name needs a value/);
  assert.equal(optionValue(['--clip', 'mfa/x'], '--clip'), 'mfa/x');
  assert.equal(optionValue([], '--clip'), undefined);
  assert.throws(() => reportSuffix(['--name', '../x']), /letters, digits, dots and dashes/);
  assert.equal(numberOption(['--rounds', '3'], '--rounds', 5), 3);
  assert.equal(numberOption([], '--rounds', 5), 5);
  assert.throws(() => numberOption(['--rounds', 'three'], '--rounds', 5), /needs a number/);
  // A report's command line gives the name back as it was typed, so the run can be repeated.
  assert.equal(nameFlag(reportSuffix(['--name', 'panel-loop'])), ' --name panel-loop');
  assert.equal(nameFlag(reportSuffix([])), '');
});

test('a tree with only earlier runs\' untracked reports is clean; changed or new code is not', () => {
  assert.deepEqual(uncommittedOf('?? benchmarks/results/eval-2026-11-29-test.md\n?? benchmarks/results/eval-2026-11-29-test.json\n'), []);
  assert.deepEqual(uncommittedOf(' M src/config.ts\n?? benchmarks/results/x.md\n?? src/new-file.ts\n'), ['src/config.ts', 'src/new-file.ts']);
  assert.deepEqual(uncommittedOf('M  benchmarks/results/old.md\n'), ['benchmarks/results/old.md']); // a committed report changed
});

test('a report names its commit and says whether the tree was clean', () => {
  assert.equal(commitState({ commit: 'abc', uncommitted: [] }), 'abc (clean tree)');
  assert.equal(commitState({ commit: 'abc', uncommitted: ['src/a.ts', 'src/b.ts'] }), 'abc with UNCOMMITTED changes (src/a.ts, src/b.ts)');
});

test('the contention table reads each round\'s totals: slowdowns and ours ÷ faster-whisper per round, then their medians', () => {
  // Three rounds of two clips. Ours: alone 2 s a round, shared 3, 3.2 and 2.8 s (slowdowns 1.5, 1.6, 1.4).
  // faster-whisper: alone 4 s, shared 8, 6 and 7 s (2, 1.5, 1.75). Per round ours ÷ faster-whisper shared:
  // 0.375, 0.533, 0.4; slowdown ratios 0.75, 1.067, 0.8.
  const rounds = (totals: number[]) => totals.map((t) => [t / 2, t / 2]);
  const greedy: ContentionDecoding = {
    beam: 1,
    ms: { ours: { alone: rounds([2000, 2000, 2000]), shared: rounds([3000, 3200, 2800]) }, fw: { alone: rounds([4000, 4000, 4000]), shared: rounds([8000, 6000, 7000]) } },
    textsChanged: { ours: { alone: 0, shared: 0 }, fw: { alone: 0, shared: 2 } },
  };
  const meta = { date: '2026-11-30', commit: 'abc', node: 'v20', cpu: 'cpu', cores: 2, threads: 2, quick: false, full: false, ggml: '', pairs: 10, oneOffRuns: 1, nodeBaselineRss: 0, durationS: 1 } as BenchMeta;
  const result = {
    shape: 'base-q8_0-real', family: 'whisper', weights: 'real', fallback: true, encodeMs: NaN, encoderGflop: null, achievedGflops: null, ceilingGflops: null,
    contention: {
      clips: ['a', 'b'], seconds: 12, rounds: 3, cores: 2, threads: { ours: 2, fw: 2 }, quant: 'q8_0', versions: { 'faster-whisper': '1.2.1', ctranslate2: '4.8.5' },
      settleMs: 2100, serverSettings: { 1: { STT_BEAM_SIZE: '1', STT_FOLLOW_FREE_CORES: 'true' } }, decodings: [greedy],
    },
  } as ShapeResult;
  const md = report('x', meta, [result]);
  assert.match(md, /\| greedy \| ours \(stt-gateway, q8_0\) \| 2\.00 \| 3\.00 \| 1\.50 \(1\.40–1\.60, 75 %\) \| 0, 0 \|/);
  assert.match(md, /\| greedy \| faster-whisper int8 \| 4\.00 \| 7\.00 \| 1\.75 \(1\.50–2\.00, 75 %\) \| 0, 2 \|/);
  assert.match(md, /\| greedy \| 0\.50 \(0\.50–0\.50, 75 %\) \| 0\.40 \(0\.38–0\.53, 75 %\) \| 0\.80 \(0\.75–1\.07, 75 %\) \|/);
  assert.match(md, /of 6 each/);
  assert.match(md, /settings `STT_FOLLOW_FREE_CORES=true`/);
  assert.match(md, /Commit abc \(clean tree\)/);
});

test('a decoding is named one way in every report', () => {
  assert.equal(decodingName(1), 'greedy');
  assert.equal(decodingName(5), 'beam 5');
  assert.equal(decodingName(2), 'beam 2');
});
