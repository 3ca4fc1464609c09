// npm run bench [-- --quick | --full] — this server against whisper.cpp's own
// tools, side by side in one run. Writes benchmarks/results/<date>[-quick|-full].json,
// a Markdown report (benchmarks/lib/report.ts) and an SVG chart.
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
import { benchModel, type BenchModel } from './lib/models';
import { speechClip } from '../test/helpers/clips';
import { harness, HarnessSession, pairWithHarness, requireBin } from './lib/harness';
import { naiveCli, procRss, startOurs, startWhisperServer, type Contender } from './lib/servers';
import { fmt, median } from './lib/stats';
import { mixes } from './lib/mixes';
import { runMix, type MixRound } from './lib/load';
import { OutputCheck } from './lib/outputs';
import { provenance } from './lib/provenance';
import { writeReport } from './lib/report';

const quick = process.argv.includes('--quick');
const full = process.argv.includes('--full');
const THREADS = Number(process.env.BENCH_THREADS ?? os.availableParallelism());
/** Pairs per overhead ratio: an even count, so each side goes first equally often. */
const PAIRS = quick ? 4 : 10;
/** Runs of the naive CLI per clip and of the cold start per model. */
const ONE_OFF_RUNS = full ? 5 : 1;
/** `--models a,b` and `--rounds N` narrow a run (the report says so); otherwise the size's defaults. */
const flag = (name: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
const SHAPES = flag('--models')?.split(',') ?? (quick
  ? ['base-q8_0-ctx64']
  : full
    ? ['base-q8_0-ctx64', 'base-f16-ctx64', 'small-q8_0-ctx64', 'small-f16-ctx64', 'parakeet-0.6b-q8_0', 'parakeet-0.6b-f16']
    : ['base-q8_0-ctx64', 'base-f16-ctx64', 'small-q8_0-ctx64', 'parakeet-0.6b-q8_0']);
const ROUNDS = flag('--rounds') === undefined ? undefined : Number(flag('--rounds'));
/**
 * Load rounds per Whisper model (every mix, every contender, contenders
 * rotating which goes first). A round of all six mixes takes about 2 minutes
 * per contender for base here, so the default run has 3 rounds of base q8_0
 * (its min–max covers the median with 75 %); --full 5 of every Whisper shape.
 */
const loadRoundsFor = (shape: string) => ROUNDS ?? (quick ? 1 : full ? 5 : shape === 'base-q8_0-ctx64' ? 3 : 0);
const WORK = path.resolve(__dirname, '.work');
const OUT = path.resolve(__dirname, 'results');
const run = promisify(execFile);

const clips: Record<number, Buffer> = {};
const clipFile = (s: number) => path.join(WORK, `clip-${s}.wav`);

interface Shape {
  name: string;
  family: 'whisper' | 'parakeet';
  file: string;
  runtime: { id: string; file: string };
  /** Encoder dimensions for the FLOP count (Whisper only). */
  encoder?: { state: number; layers: number };
  quant: string;
  weights: BenchModel['weights'];
  /** Temperature fallback for every contender: on with real weights. */
  fallback: boolean;
}

async function shapeOf(name: string): Promise<Shape> {
  const { file, weights } = await benchModel(name);
  const fallback = weights === 'real';
  if (name.startsWith('parakeet')) {
    return { name, family: 'parakeet', file, weights, fallback, quant: name.split('-').pop()!, runtime: { id: 'parakeet-tdt-0.6b-v3', file: 'parakeet-tdt-0.6b-v3-q8_0.bin' } };
  }
  const [size, quant] = name.split('-');
  return {
    name, family: 'whisper', file, quant, weights, fallback,
    runtime: size === 'base' ? { id: 'whisper-base', file: 'ggml-base.bin' } : { id: 'whisper-small', file: 'ggml-small.bin' },
    encoder: size === 'base' ? { state: 512, layers: 6 } : { state: 768, layers: 12 },
  };
}

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

/**
 * The overhead pairs, their control and the floor run with the temperature
 * fallback off on both sides, whatever the load rounds use. With it on, a
 * window decoded again at T > 0 samples from whisper.cpp decoder 0's
 * generator, which is seeded once per state and carries over between
 * requests: the same 30-s clip then took 3.3-12.6 s in one harness process
 * (2026-11-23-narrowed), which measures the generator's history, not the
 * server. Off, every run does the same work; and since the fallback only
 * adds passes after the T = 0 one, a time without it is a true floor.
 */
const PAIRS_FALLBACK = false;
/** Output-check scope of the fallback-off answers: they may differ from the fallback-on ones, legitimately. */
const pairsScope = (shape: Shape) => `${shape.name}/fallback off`;

/**
 * Ours over HTTP against the bare harness with its model loaded, in PAIRS
 * pairs back to back (alternating which goes first) after a warm-up of each.
 */
async function overhead(shape: Shape, ours: Contender, seconds: number, check: OutputCheck) {
  const session = new HarnessSession(shape.family, shape.file, clipFile(seconds), THREADS, PAIRS_FALLBACK);
  await session.ready();
  await session.run(); // warm-up; the server had its own when it started
  const pairs = await pairWithHarness(session, PAIRS, () => ours.transcribeLogged!(clips[seconds]));
  await session.close();
  for (const reply of pairs.ours) check.record(pairsScope(shape), seconds, ours.name, reply);
  for (const h of pairs.harness) if (h.ids) check.record(pairsScope(shape), seconds, 'stt-harness', { text: '', tokens: h.ids });
  return {
    oursMs: pairs.oursMs,
    harnessMs: pairs.harness.map((h) => h.ms),
    ratios: pairs.ratios,
    oursFirst: pairs.oursFirst,
    /** What the server adds around the addon call: HTTP, multipart, WAV decoding, queueing, rendering. */
    addedMs: pairs.ours.map((r) => r.ms - r.sttMs),
    /** The addon call inside the server ÷ the harness, per pair: inference speed alone. */
    inferenceRatios: pairs.ours.map((r, i) => r.sttMs / pairs.harness[i].ms),
    encodeMs: pairs.harness.flatMap((h) => h.encodeMs ?? []),
  };
}

/** The control: the harness against a second harness process, paired exactly as ours is. */
async function harnessControl(shape: Shape, seconds: number) {
  const a = new HarnessSession(shape.family, shape.file, clipFile(seconds), THREADS, PAIRS_FALLBACK);
  const b = new HarnessSession(shape.family, shape.file, clipFile(seconds), THREADS, PAIRS_FALLBACK);
  await Promise.all([a.ready(), b.ready()]);
  await a.run();
  await b.run();
  const pairs = await pairWithHarness(a, PAIRS, () => b.run());
  await Promise.all([a.close(), b.close()]);
  return { ratios: pairs.ratios, oursFirst: pairs.oursFirst };
}

interface ColdStart { oursMs: number; oursRss: number; harnessMs: number; harnessRss: number }

async function coldStarts(shape: Shape): Promise<ColdStart & { runs: ColdStart[] }> {
  const runs: ColdStart[] = [];
  for (let i = 0; i < ONE_OFF_RUNS; i++) runs.push(await coldStart(shape, i % 2 === 1));
  const mid = (k: keyof ColdStart) => median(runs.map((r) => r[k]));
  return { oursMs: mid('oursMs'), oursRss: mid('oursRss'), harnessMs: mid('harnessMs'), harnessRss: mid('harnessRss'), runs };
}

async function coldStart(shape: Shape, harnessFirst: boolean): Promise<ColdStart> {
  const timeHarness = async () => {
    const t = process.hrtime.bigint();
    const h = await harness(shape.family, shape.file, clipFile(5), THREADS, 1, shape.fallback);
    return { harnessMs: Number(process.hrtime.bigint() - t) / 1e6, harnessRss: h.maxRssBytes };
  };
  const first = harnessFirst ? await timeHarness() : null;
  const ours = await startOurs({ modelFile: shape.file, threads: THREADS, runtime: shape.runtime, fallback: shape.fallback });
  await ours.transcribe(clips[5]);
  const oursMs = Number(process.hrtime.bigint() - ours.startedAt) / 1e6;
  const oursRss = procRss(ours.pid, 'VmHWM'); // a peak, as the harness's ru_maxrss is
  await ours.stop();
  return { oursMs, oursRss, ...(first ?? (await timeHarness())) };
}

/** Every mix, `rounds` times, against every contender; contenders rotate which goes first. */
async function loadRounds(shape: Shape, contenders: Contender[], rounds: number, check: OutputCheck, log: (m: string) => void) {
  // Capacity for the Poisson mixes: ours, one request at a time, the median of 3 warm runs per clip length.
  const serviceMs: Record<number, number> = {};
  for (const s of [5, 30, 120]) {
    const runs: number[] = [];
    for (let i = 0; i < 3; i++) runs.push((await contenders[0].transcribe(clips[s])).ms);
    serviceMs[s] = median(runs);
  }
  const all = mixes(serviceMs);
  const chosen = quick ? all.filter((m) => m.name === 'long first' || m.name === 'all short') : all;
  const results: MixRound[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const mix of chosen) {
      const order = contenders.map((_, i) => contenders[(i + round + chosen.indexOf(mix)) % contenders.length]);
      for (const c of order) {
        const r = await runMix(c, mix, clips, (seconds, reply) => check.record(shape.name, seconds, c.name, reply));
        results.push(r);
        log(`${shape.name} round ${round + 1} ${mix.name} ${c.name}: makespan ${fmt(r.makespanS, 1)} s, refused ${r.requests.filter((q) => q.ms === null).length}`);
      }
    }
  }
  return { serviceMs, mixes: chosen, rounds: results };
}

async function main(): Promise<void> {
  const started = Date.now();
  mkdirSync(WORK, { recursive: true });
  mkdirSync(OUT, { recursive: true });
  for (const s of [5, 30, 120]) {
    clips[s] = speechClip(s);
    writeFileSync(clipFile(s), clips[s]);
  }
  const log = (m: string) => process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(0)}s] ${m}\n`);
  const source = provenance();
  if (source.uncommitted.length) log(`uncommitted changes (recorded in the results): ${source.uncommitted.join(', ')}`);
  const ceiling = await matmulCeiling();
  log(`matmul ceiling ${JSON.stringify(ceiling)}`);
  const check = new OutputCheck();
  const results: Record<string, unknown>[] = [];
  const date = new Date().toISOString().slice(0, 10);
  const name = `${date}${quick ? '-quick' : full ? '-full' : ''}${flag('--models') || ROUNDS !== undefined ? '-narrowed' : ''}`;
  let settings: Record<string, string | undefined> = {};
  let contenderSettings: Record<string, Record<string, string | undefined>> = {};
  let nodeBaselineRss = 0;
  const meta = () => ({
    date, ...source, threads: THREADS, quick, full, command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(), ggml: systemInfo().trim(), pairs: PAIRS, oneOffRuns: ONE_OFF_RUNS,
    loadRounds: Object.fromEntries(SHAPES.filter((s) => !s.startsWith('parakeet')).map((s) => [s, loadRoundsFor(s)])),
    serverSettings: settings, contenderSettings, nodeBaselineRss,
    outputs: { checked: Object.fromEntries(check.checked), mismatches: check.mismatches },
    durationS: (Date.now() - started) / 1000,
  });

  // Node and the server with no model: where the rest of our RSS goes is model and states.
  const bare = await startOurs({ modelFile: '', threads: THREADS, fallback: false, runtime: null });
  nodeBaselineRss = bare.rssBytes();
  await bare.stop();

  for (const [index, shapeName] of SHAPES.entries()) {
    const shape = await shapeOf(shapeName);
    const ours = await startOurs({ modelFile: shape.file, threads: THREADS, runtime: shape.runtime, fallback: PAIRS_FALLBACK });
    await ours.transcribe(clips[5]); // warm-up
    if (!Object.keys(settings).length) settings = ours.settings; // replaced by a load round's contender's, when there is one

    // 1. Overhead on 30-s clips, and the control on the first model.
    const over = await overhead(shape, ours, 30, check);
    log(`${shapeName} overhead: ours ${fmt(median(over.oursMs))} ms, harness ${fmt(median(over.harnessMs))} ms, ratio ${fmt(median(over.ratios), 3)}`);
    const control = index === 0 ? await harnessControl(shape, 30) : null;
    if (control) log(`${shapeName} control harness ÷ harness ${fmt(median(control.ratios), 3)}`);
    // The harness's own time for a 5-s clip, warm, median of 5: the floor of one-at-a-time service.
    const session5 = new HarnessSession(shape.family, shape.file, clipFile(5), THREADS, PAIRS_FALLBACK);
    await session5.ready();
    await session5.run();
    const harness5Runs: number[] = [];
    for (let i = 0; i < 5; i++) harness5Runs.push((await session5.run()).ms);
    await session5.close();
    const harness5Ms = median(harness5Runs);
    await ours.stop();

    // 2. Load, Whisper only (whisper.cpp has no Parakeet server).
    const rounds = shape.family === 'whisper' ? loadRoundsFor(shapeName) : 0;
    let load = null;
    if (rounds) {
      // Fresh processes for every contender, so no one's peak RSS carries the overhead runs.
      const fresh = await startOurs({ modelFile: shape.file, threads: THREADS, runtime: shape.runtime, fallback: shape.fallback });
      const arrival = await startOurs({ modelFile: shape.file, threads: THREADS, runtime: shape.runtime, fallback: shape.fallback, scheduling: 'arrival' });
      const ws = await startWhisperServer(shape.file, THREADS, shape.fallback);
      settings = fresh.settings;
      for (const c of [fresh, arrival, ws]) await c.transcribe(clips[5]);
      contenderSettings = { [fresh.name]: fresh.settings, [arrival.name]: arrival.settings, [ws.name]: { command: `whisper-server ${ws.args.join(' ')}` } };
      load = await loadRounds(shape, [fresh, arrival, ws], rounds, check, log);
      for (const c of [fresh, arrival, ws]) await c.stop();
    }

    // 3. Naive: one CLI process per request.
    const cli = naiveCli(shape.family, shape.file, THREADS, WORK, shape.fallback);
    const naiveRuns: Record<number, number[]> = { 5: [], 30: [] };
    for (let i = 0; i < ONE_OFF_RUNS; i++) {
      for (const s of [5, 30]) {
        const reply = await cli.transcribe(clips[s]);
        naiveRuns[s].push(reply.ms);
        if (shape.family === 'whisper') check.record(shapeName, s, cli.name, reply);
      }
    }
    const naive = { contender: cli.name, ms: { 5: median(naiveRuns[5]), 30: median(naiveRuns[30]) }, runs: naiveRuns };
    log(`${shapeName} ${cli.name}: 5 s ${fmt(naive.ms[5], 0)} ms, 30 s ${fmt(naive.ms[30], 0)} ms`);

    // 4. Cold start and memory.
    const cold = await coldStarts(shape);
    log(`${shapeName} cold start ours ${fmt(cold.oursMs)} ms, harness ${fmt(cold.harnessMs)} ms`);

    const encodeMs = median(over.encodeMs);
    const gflop = shape.encoder ? encoderGflop(shape.encoder.state, shape.encoder.layers) : null;
    results.push({
      // Real weights keep their decoder context of 448: the label says so.
      shape: shape.weights === 'real' ? shapeName.replace('-ctx64', '-real') : shapeName, family: shape.family, weights: shape.weights, fallback: shape.fallback, pairsFallback: PAIRS_FALLBACK,
      overhead: over, control, harness5Ms, encodeMs, encoderGflop: gflop,
      achievedGflops: gflop ? gflop / (encodeMs / 1000) : null,
      ceilingGflops: shape.encoder ? ceiling[shape.quant === 'f16' ? 'F16' : 'Q8_0'] ?? null : null,
      load, naive, cold,
    });
    // After every model, so a run cut short keeps what it measured (`--report` renders it).
    writeFileSync(path.join(OUT, `${name}.json`), JSON.stringify({ meta: meta(), results }, null, 2));
  }
  writeReport(OUT, name, meta(), results);
  if (check.mismatches.length) {
    console.error(`FAILED: ${check.mismatches.length} answer(s) differ between contenders (listed in the report)`);
    process.exitCode = 1;
  }
}

/** `--report <results.json>`: renders the report of an earlier run again, without measuring. */
const rerender = process.argv.indexOf('--report');
const start = rerender >= 0
  ? async () => {
      const file = path.resolve(process.argv[rerender + 1]);
      const { meta, results } = JSON.parse(readFileSync(file, 'utf8'));
      writeReport(path.dirname(file), path.basename(file, '.json'), meta, results);
    }
  : main;

start().catch((err) => {
  console.error(err);
  process.exit(1);
});
