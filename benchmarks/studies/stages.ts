// `npx tsx benchmarks/studies/stages.ts [--rounds N] [--clip ID] [--name SUFFIX]`: where the time of
// one 30-s window goes, stage by stage, ours against faster-whisper, greedy
// and beam 5, both in the full window. Ours: whisper-cli from build/bin (the
// same whisper.cpp and ggml, patches included, as the addon), which prints its
// own per-stage timings. faster-whisper: its feature extractor,
// CTranslate2's encode() and generate() timed apart
// (benchmarks/lib/faster_whisper_stages.py). Median and range over rounds.
// The two sides run back to back in each round, which goes first alternating
// (faster-whisper in one process, warmed by one untimed round; whisper-cli a process a run),
// so each round gives one ratio per stage read under the same conditions (this
// VM drifts 10-25 % over minutes: a side's rounds run all together would carry
// the drift into the ratio); the ratios' median comes with its interval.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { readEvalSet } from '../../scripts/eval-set';
import { modelDir, venvPython } from '../faster-whisper';
import { provenance, commitState } from '../lib/provenance';
import { numberOption, optionValue, nameFlag, reportSuffix } from '../lib/args';
import { saveReport, today } from '../lib/results';
import { decodingName } from '../lib/decoding';
import { fmt, median, medianIntervalWithCoverage } from '../lib/stats';
import { cliRun } from '../lib/whisper-cli';

const THREADS = 2;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const rounds = numberOption(args, '--rounds', 5);
  const clipId = optionValue(args, '--clip') ?? 'mfa/acoustic_corpus';
  const suffix = reportSuffix(args);
  // Read before the runs: the commit and the tree as they were when the timing began.
  const prov = provenance();
  const clip = readEvalSet().find((c) => c.id === clipId);
  if (!clip) throw new Error(`no clip ${clipId} in the eval set`);
  const ours: Record<string, Record<string, number[]>> = { greedy: {}, 'beam 5': {} };
  const fw: Record<string, Record<string, number[]>> = { greedy: {}, 'beam 5': {} };
  const py = venvPython();
  const runOurs = async () => {
    for (const beam of [1, 5]) {
      const r = await cliRun(clip.file, { threads: THREADS, language: 'en', beam });
      const stages = {
        features: r.features, encode: r.encode, decode: r.decode, sample: r.sample, 'total (whisper.cpp)': r.total, 'process wall': r.wall,
        'decoder runs': r.decoderRuns,
      };
      for (const [k, v] of Object.entries(stages)) (ours[decodingName(beam)][k] ??= []).push(v);
    }
  };
  // faster-whisper in one process for the whole study, its model loaded and warmed once (as a server's
  // is), asked for one round at a time.
  const fwProcess = spawn(py, [path.join(__dirname, '..', 'lib', 'faster_whisper_stages.py'), modelDir(), String(THREADS), clip.file, 'stdin'], {
    env: { ...process.env, HF_HUB_OFFLINE: '1' }, stdio: ['pipe', 'pipe', 'inherit'],
  });
  const fwLines = createInterface({ input: fwProcess.stdout! })[Symbol.asyncIterator]();
  const nextLine = async (): Promise<string> => {
    const { value, done } = await fwLines.next();
    if (done) throw new Error('faster_whisper_stages.py ended early');
    return value;
  };
  try {
    if ((await nextLine()) !== 'ready') throw new Error('faster_whisper_stages.py did not start');
    const runFasterWhisper = async () => {
      fwProcess.stdin!.write('round\n');
      for (let line = await nextLine(); line !== 'done'; line = await nextLine()) {
        const j = JSON.parse(line) as { beam: number; features_ms: number; encode_ms: number; decode_ms: number; tokens: number };
        const f = fw[decodingName(j.beam)];
        for (const [k, v] of Object.entries({ features: j.features_ms, encode: j.encode_ms, 'decode (with sampling)': j.decode_ms, tokens: j.tokens })) (f[k] ??= []).push(v);
      }
    };
    for (let r = 0; r < rounds; r++) {
      if (r % 2 === 0) {
        await runOurs();
        await runFasterWhisper();
      } else {
        await runFasterWhisper();
        await runOurs();
      }
      process.stdout.write('.');
    }
    fwProcess.stdin!.end();
  } catch (err) {
    fwProcess.kill('SIGKILL'); // no faster-whisper left computing beside whatever runs next
    throw err;
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
  lines.push(`| tokens: faster-whisper's; ours' decoder runs (one-token steps and batched ones) | ${cell(ours.greedy['decoder runs'])} | ${cell(fw.greedy.tokens)} | ${cell(ours['beam 5']['decoder runs'])} | ${cell(fw['beam 5'].tokens)} |`);
  // Within each round: ours ÷ faster-whisper, stage by stage; the median of the rounds' ratios and its interval.
  const ratioCell = (a: number[], b: number[]) => {
    const ratios = a.map((x, r) => x / b[r]);
    const { lo, hi, coverage } = medianIntervalWithCoverage(ratios);
    return `${fmt(median(ratios), 2)} (${fmt(lo, 2)} .. ${fmt(hi, 2)}, ${fmt(coverage * 100, 0)} %)`;
  };
  const ratioLines = ['| ours ÷ faster-whisper, per round: median (interval, its coverage) | greedy | beam 5 |', '| --- | --- | --- |'];
  const decoding = (label: string) => ({
    encoder: [ours[label].encode, fw[label].encode],
    'decoder steps with sampling': [sum(ours[label], ['decode', 'sample']), fw[label]['decode (with sampling)']],
    'sum of the stages': [sum(ours[label], ['features', 'encode', 'decode', 'sample']), sum(fw[label], ['features', 'encode', 'decode (with sampling)'])],
  });
  for (const stage of ['encoder', 'decoder steps with sampling', 'sum of the stages'] as const) {
    ratioLines.push(`| ${stage} | ${ratioCell(...(decoding('greedy')[stage] as [number[], number[]]))} | ${ratioCell(...(decoding('beam 5')[stage] as [number[], number[]]))} |`);
  }
  const date = today();
  saveReport(`stages-${date}${suffix}`, [
    `# Where one window's time goes, ${date}`, '',
    `\`npx tsx benchmarks/studies/stages.ts --rounds ${rounds} --clip ${clipId}${nameFlag(suffix)}\` on commit ${commitState(prov)}; whisper-cli sha256 ${prov.binaries['whisper-cli']}; ${prov.cores} cores (${prov.cpu}), ${THREADS} threads each side.`,
    `One held-out clip (${clip.id}, ${fmt(clip.seconds, 1)} s, from ${clip.source}), the full 30-s window on both sides, English, no temperature fallback. Ours: whisper-cli (its whisper_print_timings), real base q8_0, flash attention on, timestamps on (as the server and faster-whisper decode: whisper-cli's \`-nt\` would decode without timestamp tokens, about a tenth fewer steps; the earlier reports of this study used it). faster-whisper: int8, the same CTranslate2 weights; its features, encode() and generate() (timestamps on, suppress_tokens [-1], max 224 tokens) timed apart in Python; generate() holds its decoder and its sampling. whisper-cli is a new process each run, so its encoder runs on buffers the process has not touched before (a server's are warm); faster-whisper runs in one process, warmed by one untimed round: if anything, the setup favours faster-whisper.`, '',
    ...lines, '',
    `Rounds interleaved: in each round both sides ran back to back (ours first in even rounds, faster-whisper first in odd ones), so each round's ratio is read under one condition of this VM.`, '',
    ...ratioLines, '',
  ].join('\n'), { provenance: prov, clip: clip.id, ours, fasterWhisper: fw });
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`stages: ${(err as Error).stack}\n`);
    process.exit(1);
  });
}
