// `npx tsx benchmarks/studies/stages.ts [--rounds N] [--clip ID] [--name SUFFIX]`: where the time of
// one 30-s window goes, stage by stage, ours against faster-whisper, greedy
// and beam 5, both in the full window. Ours: whisper-cli from build/bin (the
// same whisper.cpp and ggml, patches included, as the addon), which prints its
// own per-stage timings. faster-whisper: its feature extractor,
// CTranslate2's encode() and generate() timed apart
// (benchmarks/lib/faster_whisper_stages.py). Median and range over rounds.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { readEvalSet } from '../../scripts/eval-set';
import { BIN_DIR, realModelPath } from '../../fixtures';
import { modelDir, venvPython } from '../faster-whisper';
import { provenance, commitState } from '../lib/provenance';
import { numberOption, optionValue, nameFlag, reportSuffix } from '../lib/args';
import { saveReport, today } from '../lib/results';
import { decodingName } from '../lib/decoding';
import { fmt, median } from '../lib/stats';

const run = promisify(execFile);
const THREADS = 2;

/** whisper-cli's whisper_print_timings lines: stage → ms. */
export function cliStages(stderr: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of stderr.matchAll(/whisper_print_timings:\s+(\w+) time =\s+([\d.]+) ms(?: \/\s+(\d+) runs)?/g)) out[m[1]] = Number(m[2]);
  return out;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const rounds = numberOption(args, '--rounds', 5);
  const clipId = optionValue(args, '--clip') ?? 'mfa/acoustic_corpus';
  const suffix = reportSuffix(args);
  // Read before the runs: the commit and the tree as they were when the timing began.
  const prov = provenance();
  const clip = readEvalSet().find((c) => c.id === clipId);
  if (!clip) throw new Error(`no clip ${clipId} in the eval set`);
  const model = realModelPath('base-q8_0');
  const ours: Record<string, Record<string, number[]>> = { greedy: {}, 'beam 5': {} };
  for (let r = 0; r < rounds; r++) {
    for (const [label, flags] of [['greedy', ['-bs', '1', '-bo', '1']], ['beam 5', ['-bs', '5']]] as const) {
      const t0 = performance.now();
      const { stderr } = await run(path.join(BIN_DIR, 'whisper-cli'), ['-m', model, '-f', clip.file, '-t', String(THREADS), '-l', 'en', '-nf', '-nt', ...flags], { maxBuffer: 1 << 24 });
      const wall = performance.now() - t0;
      const s = cliStages(stderr);
      const stages = { features: s.mel, encode: s.encode, decode: (s.decode ?? 0) + (s.batchd ?? 0) + (s.prompt ?? 0), sample: s.sample, 'total (whisper.cpp)': s.total, 'process wall': wall };
      for (const [k, v] of Object.entries(stages)) (ours[label][k] ??= []).push(v);
    }
    process.stdout.write('.');
  }
  const py = venvPython();
  const { stdout } = await run(py, [path.join(__dirname, '..', 'lib', 'faster_whisper_stages.py'), modelDir(), String(THREADS), clip.file, String(rounds)], { env: { ...process.env, HF_HUB_OFFLINE: '1' }, maxBuffer: 1 << 24 });
  const fw: Record<string, Record<string, number[]>> = { greedy: {}, 'beam 5': {} };
  for (const line of stdout.trim().split('\n')) {
    const j = JSON.parse(line) as { beam: number; features_ms: number; encode_ms: number; decode_ms: number; tokens: number };
    const f = fw[decodingName(j.beam)];
    for (const [k, v] of Object.entries({ features: j.features_ms, encode: j.encode_ms, 'decode (with sampling)': j.decode_ms, tokens: j.tokens })) (f[k] ??= []).push(v);
  }
  process.stdout.write('\n');
  const cell = (xs?: number[]) => (xs?.length ? `${fmt(median(xs), 0)} (${fmt(Math.min(...xs), 0)}-${fmt(Math.max(...xs), 0)})` : '—');
  const lines = ['| stage, ms: median (range) | ours greedy | faster-whisper greedy | ours beam 5 | faster-whisper beam 5 |', '| --- | --- | --- | --- | --- |'];
  const rows: [string, string, string][] = [
    ['features (log-mel)', 'features', 'features'], ['encoder', 'encode', 'encode'], ['decoder steps', 'decode', 'decode (with sampling)'],
    ['sampling (ours apart; theirs inside generate)', 'sample', ''], ['whole window (ours: whisper.cpp total)', 'total (whisper.cpp)', ''],
  ];
  for (const [label, o, f] of rows) lines.push(`| ${label} | ${cell(ours.greedy[o])} | ${cell(fw.greedy[f])} | ${cell(ours['beam 5'][o])} | ${cell(fw['beam 5'][f])} |`);
  const sum = (x: Record<string, number[]>, ks: string[]) => Array.from({ length: rounds }, (_, r) => ks.reduce((s, k) => s + (x[k]?.[r] ?? 0), 0));
  lines.push(`| sum of the stages | ${cell(sum(ours.greedy, ['features', 'encode', 'decode', 'sample']))} | ${cell(sum(fw.greedy, ['features', 'encode', 'decode (with sampling)']))} | ${cell(sum(ours['beam 5'], ['features', 'encode', 'decode', 'sample']))} | ${cell(sum(fw['beam 5'], ['features', 'encode', 'decode (with sampling)']))} |`);
  lines.push(`| faster-whisper's tokens | | ${cell(fw.greedy.tokens)} | | ${cell(fw['beam 5'].tokens)} |`);
  const date = today();
  saveReport(`stages-${date}${suffix}`, [
    `# Where one window's time goes, ${date}`, '',
    `\`npx tsx benchmarks/studies/stages.ts --rounds ${rounds} --clip ${clipId}${nameFlag(suffix)}\` on commit ${commitState(prov)}; whisper-cli sha256 ${prov.binaries['whisper-cli']}; ${prov.cores} cores (${prov.cpu}), ${THREADS} threads each side.`,
    `One held-out clip (${clip.id}, ${fmt(clip.seconds, 1)} s, spontaneous speech), the full 30-s window on both sides, English, no temperature fallback. Ours: whisper-cli (its whisper_print_timings), real base q8_0, flash attention on. faster-whisper: int8, the same CTranslate2 weights; its features, encode() and generate() (timestamps on, suppress_tokens [-1], max 224 tokens) timed apart in Python; generate() holds its decoder and its sampling.`, '',
    ...lines, '',
  ].join('\n'), { provenance: prov, clip: clip.id, ours, fasterWhisper: fw });
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`stages: ${(err as Error).stack}\n`);
    process.exit(1);
  });
}
