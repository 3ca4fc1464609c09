// npm run bench [-- --quick | --full] — this server against whisper.cpp's own
// tools, side by side in one run. Writes benchmarks/results/bench-<date>[-quick|-full][-<scenarios>][-<--name>].json,
// a Markdown report (benchmarks/lib/report.ts) and an SVG chart. What runs is
// data in benchmarks/trials.ts (the shapes per size of run, the scenarios in
// order); each scenario type's code is in benchmarks/scenarios/.
//
// 1. Overhead: ours over HTTP against the bare C++ harness, in pairs, with a
//    harness-against-harness control read the same way.
// 2. Load: six request mixes (bursts in both orders, all short, all long,
//    Poisson arrivals at 70 % and 90 % of capacity) against three contenders:
//    ours, ours in arrival order without preemption (the control that splits
//    policy from implementation), and whisper-server.
// 3. A naive one-process-per-request wrapper, and cold start.
// Every answer is checked: the same clip must give the same tokens (or text)
// from every contender; a mismatch is reported and fails the run.
//
// Models: real Whisper base weights when `npm run models:real` installed them
// (decoder context 448, decoding to end of text, temperature fallback on for
// every contender with whisper.cpp's default best_of 5); otherwise generated
// stand-ins of exact shapes with random weights, a decoder context of 64 (28
// tokens per window for every contender) and the fallback off (random
// weights would trigger it on every window).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { systemInfo } from '../src/native';
import { requireBin, speechClip } from '../fixtures';
import type { BenchMeta, BenchResults, ScenarioResults, ShapeResult } from './lib/bench-types';
import { startOurs, type Contender } from './lib/servers';
import { median } from './lib/stats';
import { OutputCheck } from './lib/outputs';
import { provenance } from './lib/provenance';
import { writeReport } from './lib/report';
import { reportSuffix } from './lib/args';
import { RESULTS_DIR, today } from './lib/results';
import { CONTENTION_ROUNDS, OTHER_SHAPE_ROUNDS, SCENARIOS, TRIALS, type RunSize, type Scenario } from './trials';
import { PAIRS_FALLBACK, SCENARIO_TYPES, shapeOf, type BenchContext, type Shape, type ShapeRun } from './scenarios';

const quick = process.argv.includes('--quick');
const full = process.argv.includes('--full');
const SIZE: RunSize = quick ? 'quick' : full ? 'full' : 'default';
const THREADS = Number(process.env.BENCH_THREADS ?? os.availableParallelism());
/** Pairs per overhead ratio: an even count, so each side goes first equally often. */
const PAIRS = quick ? 4 : 10;
/** Runs of the naive CLI per clip and of the cold start per model. */
const ONE_OFF_RUNS = full ? 5 : 1;
/** `--models a,b` and `--rounds N` narrow a run (the report says so); otherwise the size's trials. */
const flag = (name: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
const SHAPES = flag('--models')?.split(',') ?? TRIALS.filter((t) => t.sizes.includes(SIZE)).map((t) => t.shape);
const ROUNDS = flag('--rounds') === undefined ? undefined : Number(flag('--rounds'));
/** `--scenarios a,b`: only these scenario types (benchmarks/trials.ts), a narrowed run. */
const ONLY = flag('--scenarios')?.split(',');
/** `--name`: a second run on one day goes beside the first's report, not over it (read before the run, so a bad name stops it at once). */
const NAME_SUFFIX = reportSuffix(process.argv.slice(2));
const loadRoundsFor = (shape: string) => ROUNDS ?? (TRIALS.find((t) => t.shape === shape)?.loadRounds ?? OTHER_SHAPE_ROUNDS)[SIZE];
const WORK = path.resolve(__dirname, '.work');
const run = promisify(execFile);

/** Encoder FLOPs of one 30-s window (1500 frames) for a Whisper shape. */
function encoderGflop(state: number, layers: number, mels = 80, n = 1500): number {
  const perLayer = 24 * n * state * state + 4 * n * n * state;
  const conv = 2 * 3 * mels * state * 2 * n + 2 * 3 * state * state * n;
  return (layers * perLayer + conv) / 1e9;
}

/** ggml_mul_mat GFLOP/s at 1024³ for F16 and Q8_0 (whisper-bench -w 2 style, in our harness). */
async function matmulCeiling(): Promise<Record<string, number>> {
  const { stdout } = await run(requireBin('stt-harness'), ['matmul', String(THREADS), '1024']);
  const gflops: Record<string, number> = {};
  for (const line of stdout.trim().split('\n')) {
    const e = JSON.parse(line);
    gflops[String(e.type).toUpperCase()] = e.gflops;
  }
  return gflops;
}

const applies = (scenario: Scenario, shape: Shape, index: number) =>
  (!scenario.families || scenario.families.includes(shape.family)) && (!scenario.firstShapeOnly || index === 0);

/** One shape through every scenario, in order; ours with the pairs' fallback is up from its first use to the first scenario that runs alone. */
async function runShape(bench: BenchContext, shape: Shape, index: number): Promise<ScenarioResults> {
  const paired: { ours: Awaited<ReturnType<typeof startOurs>> | null } = { ours: null };
  const shapeRun: ShapeRun = {
    bench, shape, index, loadRounds: loadRoundsFor(shape.name),
    pairedOurs: async (): Promise<Contender> => {
      if (!paired.ours) {
        paired.ours = await startOurs({ modelFile: shape.file, threads: bench.threads, runtime: shape.runtime, fallback: PAIRS_FALLBACK });
        await paired.ours.transcribe(bench.clips[5]); // warm-up
        if (!Object.keys(bench.settings.server).length) bench.settings.server = paired.ours.settings; // replaced by a load round's contender's, when there is one
      }
      return paired.ours;
    },
  };
  const stopPaired = async () => {
    await paired.ours?.stop();
    paired.ours = null;
  };
  const measured: ScenarioResults = {};
  for (const scenario of SCENARIOS) {
    if (ONLY && !ONLY.includes(scenario.type)) continue;
    const type = SCENARIO_TYPES[scenario.type];
    if (type.phase === 'alone') await stopPaired();
    if (applies(scenario, shape, index)) Object.assign(measured, await type.run(shapeRun));
  }
  await stopPaired();
  return measured;
}

/** A shape's entry in the results: what its scenarios measured, and the encoder's efficiency from the overhead pairs' harness runs. */
function shapeResult(shape: Shape, measured: ScenarioResults, ceiling: Record<string, number>): ShapeResult {
  const encodeMs = median(measured.overhead?.encodeMs ?? []);
  const gflop = shape.encoder ? encoderGflop(shape.encoder.state, shape.encoder.layers) : null;
  return {
    // Real weights keep their decoder context of 448: the label says so.
    shape: shape.weights === 'real' ? shape.name.replace('-ctx64', '-real') : shape.name, family: shape.family, weights: shape.weights, fallback: shape.fallback, pairsFallback: PAIRS_FALLBACK,
    overhead: measured.overhead, control: measured.control ?? null, harness5Ms: measured.harness5Ms, encodeMs, encoderGflop: gflop,
    achievedGflops: gflop ? gflop / (encodeMs / 1000) : null,
    ceilingGflops: shape.encoder ? ceiling[shape.quant === 'f16' ? 'F16' : 'Q8_0'] ?? null : null,
    load: measured.load ?? null, naive: measured.naive, cold: measured.cold, store: measured.store, fasterWhisper: measured.fasterWhisper, contention: measured.contention,
  };
}

async function main(): Promise<void> {
  const started = Date.now();
  mkdirSync(WORK, { recursive: true });
  mkdirSync(RESULTS_DIR, { recursive: true });
  const bench: BenchContext = {
    quick, contentionRounds: ROUNDS ?? CONTENTION_ROUNDS[SIZE], threads: THREADS, pairs: PAIRS, oneOffRuns: ONE_OFF_RUNS, work: WORK,
    clips: {}, clipFile: (s) => path.join(WORK, `clip-${s}.wav`),
    check: new OutputCheck(),
    log: (m) => process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(0)}s] ${m}\n`),
    settings: { server: {}, contenders: {} },
  };
  for (const s of [5, 30, 120]) {
    bench.clips[s] = speechClip(s);
    writeFileSync(bench.clipFile(s), bench.clips[s]);
  }
  const source = provenance();
  if (source.uncommitted.length) bench.log(`uncommitted changes (recorded in the results): ${source.uncommitted.join(', ')}`);
  const ceiling = await matmulCeiling();
  bench.log(`matmul ceiling ${JSON.stringify(ceiling)}`);
  const results: ShapeResult[] = [];
  const date = today();
  // A run of named scenarios is named after them (its report holds only theirs).
  const name = `bench-${date}${quick ? '-quick' : full ? '-full' : ''}${ONLY ? `-${ONLY.join('+')}` : flag('--models') || ROUNDS !== undefined ? '-narrowed' : ''}${NAME_SUFFIX}`;
  let nodeBaselineRss = 0;
  const meta = (): BenchMeta => ({
    date, ...source, threads: THREADS, quick, full, command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(), ggml: systemInfo().trim(), pairs: PAIRS, oneOffRuns: ONE_OFF_RUNS,
    loadRounds: Object.fromEntries(SHAPES.filter((s) => !s.startsWith('parakeet')).map((s) => [s, loadRoundsFor(s)])),
    serverSettings: bench.settings.server, contenderSettings: bench.settings.contenders, nodeBaselineRss,
    outputs: { checked: Object.fromEntries(bench.check.checked), mismatches: bench.check.mismatches },
    durationS: (Date.now() - started) / 1000,
  });

  // Node and the server with no model: where the rest of our RSS goes is model and states.
  const bare = await startOurs({ modelFile: '', threads: THREADS, fallback: false, runtime: null });
  nodeBaselineRss = bare.rssBytes();
  await bare.stop();

  for (const [index, shapeName] of SHAPES.entries()) {
    const shape = await shapeOf(shapeName);
    results.push(shapeResult(shape, await runShape(bench, shape, index), ceiling));
    // After every model, so a run cut short keeps what it measured (`--report` renders it).
    const file: BenchResults = { meta: meta(), results };
    writeFileSync(path.join(RESULTS_DIR, `${name}.json`), JSON.stringify(file, null, 2));
  }
  writeReport(RESULTS_DIR, name, meta(), results);
  if (bench.check.mismatches.length) {
    console.error(`FAILED: ${bench.check.mismatches.length} answer(s) differ between contenders (listed in the report)`);
    process.exitCode = 1;
  }
}

/** `--report <results.json>`: renders the report of an earlier run again, without measuring. */
const rerender = process.argv.indexOf('--report');
const start = rerender >= 0
  ? async () => {
      const file = path.resolve(process.argv[rerender + 1]);
      const { meta, results } = JSON.parse(readFileSync(file, 'utf8')) as BenchResults;
      writeReport(path.dirname(file), path.basename(file, '.json'), meta, results);
    }
  : main;

start().catch((err) => {
  console.error(err);
  process.exit(1);
});
