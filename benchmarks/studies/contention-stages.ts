// `npx tsx benchmarks/studies/contention-stages.ts [--rounds N] [--clip ID] [--name NAME]`:
// where a busy process's cost lands, stage by stage (issue 32, item 5). The
// stages of stages.ts (ours: whisper-cli's own timings; faster-whisper:
// encode() and generate() timed apart), each measured alone and beside one
// `python3 -c 'while True: pass'` on the same round, greedy and beam 5, the
// full 30-s window. Ours runs with 2 threads and with 1; the server's default
// when another process holds a core (the encoder on 2 threads, the decoder on
// 1: src/stt/local/free-cores.ts) is read as the 2-thread run's encoder and
// the 1-thread run's decoder and sampling, which give the same tokens
// (fa-fixed-key-chunks). Conditions alternate in order round by round.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { readEvalSet } from '../../scripts/eval-set';
import { BIN_DIR, realModelPath } from '../../fixtures';
import { modelDir, venvPython } from '../faster-whisper';
import { provenance, commitState } from '../lib/provenance';
import { nameFlag, numberOption, optionValue, reportSuffix } from '../lib/args';
import { saveReport, today } from '../lib/results';
import { decodingName } from '../lib/decoding';
import { fmt, median } from '../lib/stats';
import { cliRun } from '../lib/whisper-cli';

const run = promisify(execFile);
/** Decoding → beams. */
const DECODINGS = { greedy: 1, 'beam 5': 5 } as const;
type Decoding = keyof typeof DECODINGS;
const isDecoding = (name: string): name is Decoding => Object.hasOwn(DECODINGS, name);
type Condition = 'alone' | 'shared';
/** Stage → ms, one run. */
type Stages = { encoder: number; decoder: number };
/** contender → decoding → condition → one Stages per round. */
type Runs = Record<string, Record<Decoding, Record<Condition, Stages[]>>>;

async function oursStages(clip: string, threads: number, decoding: Decoding): Promise<Stages> {
  const r = await cliRun(clip, { threads, language: 'en', beam: DECODINGS[decoding] });
  return { encoder: r.encode, decoder: r.decode + r.sample };
}

/** One warm round of faster-whisper's stages: its process runs two and the first, which pays CTranslate2's warm-up, is dropped. */
async function fasterWhisperStages(clip: string): Promise<Record<Decoding, Stages>> {
  const { stdout } = await run(venvPython(), [path.join(__dirname, '..', 'lib', 'faster_whisper_stages.py'), modelDir(), '2', clip, '2'], { env: { ...process.env, HF_HUB_OFFLINE: '1' }, maxBuffer: 1 << 24 });
  const out = {} as Record<Decoding, Stages>;
  for (const line of stdout.trim().split('\n')) {
    const j = JSON.parse(line) as { round: number; beam: number; encode_ms: number; decode_ms: number };
    if (j.round !== 1) continue;
    const name = decodingName(j.beam);
    if (!isDecoding(name)) throw new Error(`faster_whisper_stages.py decoded with beam ${j.beam}, which this study does not run`);
    out[name] = { encoder: j.encode_ms, decoder: j.decode_ms };
  }
  return out;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const rounds = numberOption(args, '--rounds', 5);
  const clipId = optionValue(args, '--clip') ?? 'mfa/acoustic_corpus';
  const suffix = reportSuffix(args);
  const prov = provenance(); // before the runs: the tree as it was when the timing began
  const clip = readEvalSet().find((c) => c.id === clipId);
  if (!clip) throw new Error(`no clip ${clipId} in the eval set`);
  const contenders = ['ours, 2 threads', 'ours, 1 thread', 'faster-whisper int8, 2 threads'];
  const runs: Runs = Object.fromEntries(contenders.map((c) => [c, { greedy: { alone: [], shared: [] }, 'beam 5': { alone: [], shared: [] } }]));
  let hog: ChildProcess | undefined;
  // Never leave the busy process behind, whatever fails or stops the study.
  process.on('exit', () => hog?.kill());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
  for (let r = 0; r < rounds; r++) {
    const order: Condition[] = r % 2 ? ['shared', 'alone'] : ['alone', 'shared'];
    for (const condition of order) {
      if (condition === 'shared') {
        hog = spawn('python3', ['-c', 'while True: pass'], { stdio: 'ignore' });
        await sleep(500);
      }
      for (const decoding of Object.keys(DECODINGS) as Decoding[]) {
        runs['ours, 2 threads'][decoding][condition].push(await oursStages(clip.file, 2, decoding));
        runs['ours, 1 thread'][decoding][condition].push(await oursStages(clip.file, 1, decoding));
      }
      const fw = await fasterWhisperStages(clip.file);
      for (const decoding of Object.keys(DECODINGS) as Decoding[]) runs['faster-whisper int8, 2 threads'][decoding][condition].push(fw[decoding]);
      if (hog) {
        const exited = once(hog, 'exit');
        hog.kill();
        await exited;
        hog = undefined;
      }
    }
    process.stdout.write('.');
  }
  process.stdout.write('\n');
  // The server's default: alone both stages on 2 threads; shared the encoder on 2, the decoder on 1.
  const defaultLabel = 'ours, the server\'s default (shared: encoder 2 threads, decoder 1)';
  runs[defaultLabel] = Object.fromEntries((Object.keys(DECODINGS) as Decoding[]).map((d) => [d, {
    alone: runs['ours, 2 threads'][d].alone,
    shared: runs['ours, 2 threads'][d].shared.map((s, r) => ({ encoder: s.encoder, decoder: runs['ours, 1 thread'][d].shared[r].decoder })),
  }])) as Runs[string];

  const cell = (xs: number[], digits: number) => `${fmt(median(xs), digits)} (${fmt(Math.min(...xs), digits)} .. ${fmt(Math.max(...xs), digits)})`;
  const lines: string[] = [];
  for (const decoding of Object.keys(DECODINGS) as Decoding[]) {
    lines.push(`### ${decoding}`, '', '| contender | stage | alone, ms | shared, ms | slowdown: median (range over rounds) |', '| --- | --- | --- | --- | --- |');
    for (const c of [...contenders.slice(0, 2), defaultLabel, contenders[2]]) {
      for (const stage of ['encoder', 'decoder', 'both'] as const) {
        const of = (cond: Condition) => runs[c][decoding][cond].map((s) => (stage === 'both' ? s.encoder + s.decoder : s[stage]));
        const [alone, shared] = [of('alone'), of('shared')];
        lines.push(`| ${c} | ${stage === 'both' ? 'both' : stage === 'decoder' ? 'decoder (with sampling)' : 'encoder'} | ${fmt(median(alone), 0)} | ${fmt(median(shared), 0)} | ${cell(shared.map((s, r) => s / alone[r]), 2)} |`);
      }
    }
    lines.push('');
  }
  const date = today();
  saveReport(`contention-stages-${date}${suffix}`, [
    `# Sharing the CPU, stage by stage, ${date}`, '',
    `\`npx tsx benchmarks/studies/contention-stages.ts --rounds ${rounds} --clip ${clipId}${nameFlag(suffix)}\` on commit ${commitState(prov)}; whisper-cli sha256 ${prov.binaries['whisper-cli']}; ${prov.cores} cores (${prov.cpu}; ${prov.cpuFlags.join(' ')}).`,
    `One held-out clip (${clip.id}, ${fmt(clip.seconds, 1)} s), the full 30-s window, English, no temperature fallback. Ours: whisper-cli's own stage timings (whisper_print_timings; the decoder is its decode, batch-decode and prompt passes plus its sampling), real base q8_0. faster-whisper 1.2.1: int8, the same CTranslate2 weights, encode() and generate() timed apart (generate() holds its decoder and its sampling). "Shared": one \`python3 -c 'while True: pass'\` running throughout; each round runs every contender alone and shared, the order of the two conditions alternating; the slowdown is a round's shared time over the same round's alone time. The server's default row is composed, not run: alone, the 2-thread run; shared, the 2-thread run's encoder and the 1-thread run's decoder, as the server runs them while another process holds a core.`, '',
    ...lines,
  ].join('\n'), { provenance: prov, clip: clip.id, rounds, runs });
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`contention-stages: ${(err as Error).stack}\n`);
    process.exit(1);
  });
}
