// npm run bench [-- --quick | --full] — this server against whisper.cpp's own
// tools, side by side in one run, on generated models of exact shapes. Writes
// benchmarks/results/<date>[-quick|-full].json, a Markdown report and an SVG chart.
//
// The default run fits 20 minutes on 2 cores: overhead for base (f16, q8_0),
// small q8_0 and Parakeet q8_0, and the load scenario for base q8_0. --full
// runs every shape (base, small, Parakeet; f16 and q8_0) and the load scenario
// for every Whisper shape, 5 rounds each: one round of small takes 2-3 minutes
// per contender here, so the whole matrix takes over an hour on 2 cores.
//
// Random weights make decoders run to their cap. The generated models keep
// the exact encoder and decoder shapes but a decoder context of 64, so every
// contender stops at the same 28 tokens per window (whisper.cpp's
// n_text_ctx/2 - 4); greedy, no temperature fallback, language en, the same
// thread count.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { systemInfo } from '../src/native';
import { benchModel, type BenchModel } from './lib/models';
import { speechClip } from '../test/helpers/clips';
import { harness, HarnessSession, pairWithHarness, requireBin } from './lib/harness';
import { naiveCli, startOurs, startWhisperServer, type Contender } from './lib/servers';
import { fmt, median, medianInterval, percentile, range } from './lib/stats';
import { chartSvg } from './lib/chart';

const quick = process.argv.includes('--quick');
const full = process.argv.includes('--full');
const THREADS = Number(process.env.BENCH_THREADS ?? os.availableParallelism());
/**
 * Pairs of runs (ours and the harness back to back) per overhead measurement:
 * more for the cheap base shapes, whose ratio this VM's drift blurs most.
 */
const repsFor = (shape: string) => (quick ? 3 : shape.startsWith('base') ? 6 : 5);
/** Runs of the naive CLI per clip and of the cold start per model: once in the 20-minute run, 5 in --full. */
const ONE_OFF_RUNS = full ? 5 : 1;
const SHAPES = quick
  ? ['base-q8_0-ctx64']
  : full
    ? ['base-q8_0-ctx64', 'base-f16-ctx64', 'small-q8_0-ctx64', 'small-f16-ctx64', 'parakeet-0.6b-q8_0', 'parakeet-0.6b-f16']
    : ['base-q8_0-ctx64', 'base-f16-ctx64', 'small-q8_0-ctx64', 'parakeet-0.6b-q8_0'];
/** The load: 2 clients send one 120-s clip each, 6 clients send SHORT_PER_CLIENT 5-s clips each, all at once. */
const CLIENTS = 8;
const LONG_CLIENTS = 2;
const SHORT_PER_CLIENT = 1;
/**
 * Short-clip clients start this long after the long-clip ones, so every
 * contender sees the same arrival order: the case that matters, short
 * requests arriving while long ones are in hand (otherwise upload timing
 * decides who is first, and whisper-server's FIFO order changes run to run).
 */
const SHORT_START_DELAY_MS = 500;
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
}

async function shapeOf(name: string): Promise<Shape> {
  const { file, weights } = await benchModel(name);
  if (name.startsWith('parakeet')) {
    return { name, family: 'parakeet', file, weights, quant: name.split('-').pop()!, runtime: { id: 'parakeet-tdt-0.6b-v3', file: 'parakeet-tdt-0.6b-v3-q8_0.bin' } };
  }
  const [size, quant] = name.split('-');
  return {
    name, family: 'whisper', file, quant, weights,
    runtime: size === 'base' ? { id: 'whisper-base', file: 'ggml-base.bin' } : { id: 'whisper-small', file: 'ggml-small.bin' },
    encoder: size === 'base' ? { state: 512, layers: 6 } : { state: 768, layers: 12 },
  };
}

interface LoadRound {
  contender: string;
  wallS: number;
  audioS: number;
  throughput: number;
  shortMs: number[];
  longMs: number[];
  rssBytes: number;
}

/** A contender's load rounds: per-round figures and every request pooled (for the chart). */
interface LoadResult {
  contender: string;
  rounds: { wallS: number; throughput: number; shortP50: number; shortP95: number; longP50: number; shortSpacing: number }[];
  /** Medians over rounds. */
  throughput: number;
  shortP50: number;
  shortP95: number;
  longP50: number;
  shortMs: number[];
  longMs: number[];
  rssBytes: number;
}

/**
 * Rounds of the load scenario per Whisper model, ours and whisper-server
 * alternating which goes first. Five rounds of base q8_0 take about 10 of the
 * default run's 20 minutes; the other shapes' rounds are in --full.
 */
const loadRoundsFor = (shape: string) => (quick ? 1 : full || shape === 'base-q8_0-ctx64' ? 5 : 0);

/** The median gap between consecutive short-clip latencies of a round: what one more 5-s clip costs under load. */
function spacing(ms: number[]): number {
  const sorted = [...ms].sort((a, b) => a - b);
  return median(sorted.slice(1).map((x, i) => x - sorted[i]));
}

function summarize(rounds: LoadRound[]): LoadResult {
  const per = rounds.map((r) => ({
    wallS: r.wallS, throughput: r.throughput,
    shortP50: percentile(r.shortMs, 50), shortP95: percentile(r.shortMs, 95), longP50: percentile(r.longMs, 50),
    shortSpacing: spacing(r.shortMs),
  }));
  return {
    contender: rounds[0].contender,
    rounds: per,
    throughput: median(per.map((r) => r.throughput)),
    shortP50: median(per.map((r) => r.shortP50)),
    shortP95: median(per.map((r) => r.shortP95)),
    longP50: median(per.map((r) => r.longP50)),
    shortMs: rounds.flatMap((r) => r.shortMs),
    longMs: rounds.flatMap((r) => r.longMs),
    rssBytes: Math.max(...rounds.map((r) => r.rssBytes)),
  };
}

/** One round of the load scenario against one contender, on loopback, bounded in count. */
async function load(c: Contender): Promise<LoadRound> {
  const shortMs: number[] = [], longMs: number[] = [];
  let audio = 0;
  let rss = 0;
  const sampler = setInterval(() => (rss = Math.max(rss, c.rssBytes())), 200);
  const t = process.hrtime.bigint();
  await Promise.all(Array.from({ length: CLIENTS }, async (_, i) => {
    const isLong = i < LONG_CLIENTS;
    if (!isLong) await new Promise((r) => setTimeout(r, SHORT_START_DELAY_MS));
    for (let k = 0; k < (isLong ? 1 : SHORT_PER_CLIENT); k++) {
      const ms = await c.transcribe(clips[isLong ? 120 : 5]);
      (isLong ? longMs : shortMs).push(ms);
      audio += isLong ? 120 : 5;
    }
  }));
  clearInterval(sampler);
  const wallS = Number(process.hrtime.bigint() - t) / 1e9;
  return { contender: c.name, wallS, audioS: audio, throughput: audio / wallS, shortMs, longMs, rssBytes: rss };
}

/** Encoder FLOPs of one 30-s window (1500 frames) for a Whisper shape. */
function encoderGflop(state: number, layers: number, mels = 80, n = 1500): number {
  const perLayer = 24 * n * state * state + 4 * n * n * state;
  const conv = 2 * 3 * mels * state * 2 * n + 2 * 3 * state * state * n;
  return (layers * perLayer + conv) / 1e9;
}

/** ggml_mul_mat GFLOP/s at 1024³ for F16 and Q8_0 (whisper-bench -w 2 style, in our harness: the full -w 2 sweep takes minutes here). */
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
 * Ours over HTTP against the bare harness with its model loaded, in pairs of
 * runs back to back (alternating which goes first) after a warm-up of each;
 * the ratio is the median of the pairs' ratios, so drift in the machine's
 * speed hits both sides alike.
 */
async function overhead(shape: Shape, ours: Contender, seconds: number) {
  const session = new HarnessSession(shape.family, shape.file, clipFile(seconds), THREADS);
  await session.ready();
  await session.run(); // warm-up; the server had its own when it started
  const sttMs: number[] = [];
  const pairs = await pairWithHarness(session, repsFor(shape.name), async () => {
    const r = await ours.transcribeLogged!(clips[seconds]);
    sttMs.push(r.sttMs);
    return r.ms;
  });
  await session.close();
  return {
    oursMs: pairs.oursMs,
    harnessMs: pairs.harness.map((h) => h.ms),
    ratios: pairs.ratios,
    /** What the server adds around the addon call: HTTP, multipart, WAV decoding, queueing, rendering. */
    addedMs: pairs.oursMs.map((ms, i) => ms - sttMs[i]),
    /** The addon call inside the server ÷ the harness, per pair: inference speed alone. */
    inferenceRatios: sttMs.map((ms, i) => ms / pairs.harness[i].ms),
    encodeMs: pairs.harness.flatMap((h) => h.encodeMs ?? []),
  };
}

interface ColdStart { oursMs: number; oursRss: number; harnessMs: number; harnessRss: number }

/** ONE_OFF_RUNS cold starts, ours and the harness alternating which goes first; medians, with every run kept. */
async function coldStarts(shape: Shape): Promise<ColdStart & { runs: ColdStart[] }> {
  const runs: ColdStart[] = [];
  for (let i = 0; i < ONE_OFF_RUNS; i++) runs.push(await coldStart(shape, i % 2 === 1));
  const mid = (k: keyof ColdStart) => median(runs.map((r) => r[k]));
  return { oursMs: mid('oursMs'), oursRss: mid('oursRss'), harnessMs: mid('harnessMs'), harnessRss: mid('harnessRss'), runs };
}

async function coldStart(shape: Shape, harnessFirst: boolean): Promise<ColdStart> {
  const timeHarness = async () => {
    const t = process.hrtime.bigint();
    const h = await harness(shape.family, shape.file, clipFile(5), THREADS, 1);
    return { harnessMs: Number(process.hrtime.bigint() - t) / 1e6, harnessRss: h.maxRssBytes };
  };
  const first = harnessFirst ? await timeHarness() : null;
  const ours = await startOurs({ modelFile: shape.file, threads: THREADS, runtime: shape.runtime });
  await ours.transcribe(clips[5]);
  const oursMs = Number(process.hrtime.bigint() - ours.startedAt) / 1e6;
  const oursRss = ours.rssBytes();
  await ours.stop();
  return { oursMs, oursRss, ...(first ?? (await timeHarness())) };
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
  const ceiling = await matmulCeiling();
  log(`matmul ceiling ${JSON.stringify(ceiling)}`);
  const results: Record<string, unknown>[] = [];
  const date = new Date().toISOString().slice(0, 10);
  const name = `${date}${quick ? '-quick' : full ? '-full' : ''}`;
  const weightsUsed: string[] = [];
  const meta = () => ({
    date, cpu: os.cpus()[0]?.model ?? 'unknown', cores: os.availableParallelism(), threads: THREADS, quick, full, ggml: systemInfo().trim(),
    reps: SHAPES.map((s) => `${s} ${repsFor(s)}`).join(', '),
    loadRounds: SHAPES.filter((s) => !s.startsWith('parakeet') && loadRoundsFor(s)).map((s) => `${s} ${loadRoundsFor(s)}`).join(', ') +
      ' round(s), ours and whisper-server alternating which goes first (Whisper only: whisper.cpp has no Parakeet server)' +
      (quick || full ? '' : '; the other Whisper shapes under load: `npm run bench -- --full`'),
    oneOffRuns: ONE_OFF_RUNS,
    weights: weightsUsed.join(', '),
    tokenCap: 'generated Whisper models have n_text_ctx = 64, so every contender stops at 28 tokens per 30-s window; the generated Parakeet model emits one token per 320 ms',
    durationS: (Date.now() - started) / 1000,
  });

  for (const shapeName of SHAPES) {
    const shape = await shapeOf(shapeName);
    weightsUsed.push(`${shapeName}: ${shape.weights === 'real' ? 'real Whisper base weights (models:real), decoding to end of text' : 'generated, random weights'}`);

    // 1. Overhead, one job at a time with every thread; 5. encoder time from the harness runs.
    const ours = await startOurs({ modelFile: shape.file, threads: THREADS, runtime: shape.runtime });
    await ours.transcribe(clips[5]); // warm-up
    const over: Record<number, Awaited<ReturnType<typeof overhead>>> = {};
    // 30-s clips, where the target is; what the server adds is the same for any length (see the report).
    for (const s of [30]) {
      over[s] = await overhead(shape, ours, s);
      log(`${shapeName} overhead ${s}s: ours ${fmt(median(over[s].oursMs))} ms, harness ${fmt(median(over[s].harnessMs))} ms`);
    }
    const encodeMs = median(over[30].encodeMs);
    const gflop = shape.encoder ? encoderGflop(shape.encoder.state, shape.encoder.layers) : null;

    // 2. Under load, against whisper-server, both kept running and alternating which goes
    // first, round by round. Whisper only: whisper.cpp has no Parakeet server, and a
    // Parakeet load round (over two minutes) would have nothing to be compared with.
    const rounds = shape.family === 'whisper' ? loadRoundsFor(shapeName) : 0;
    const ws = rounds ? await startWhisperServer(shape.file, THREADS) : null;
    await ws?.transcribe(clips[5]);
    const oursRounds: LoadRound[] = [], wsRounds: LoadRound[] = [];
    for (let round = 0; round < rounds; round++) {
      for (const c of round % 2 === 0 ? [ours, ws] : [ws, ours]) {
        if (!c) continue;
        const r = await load(c);
        (c === ours ? oursRounds : wsRounds).push(r);
        log(`${shapeName} load ${c.name}: ${fmt(r.throughput, 2)} audio s/s, short p50 ${fmt(percentile(r.shortMs, 50), 0)} ms`);
      }
    }
    await ours.stop();
    await ws?.stop();
    const loadOurs = oursRounds.length ? summarize(oursRounds) : null;
    const loadWs = wsRounds.length ? summarize(wsRounds) : null;
    /** Ours ÷ whisper-server per round (rounds are back to back), for the headline. */
    const loadRatios = loadOurs && loadWs ? {
      throughput: oursRounds.map((r, i) => r.throughput / wsRounds[i].throughput),
      shortP50: loadOurs.rounds.map((r, i) => r.shortP50 / loadWs.rounds[i].shortP50),
      shortP95: loadOurs.rounds.map((r, i) => r.shortP95 / loadWs.rounds[i].shortP95),
    } : null;

    // 3. Naive: one CLI process per request, the same 5-s and 30-s clips one after another.
    const cli = naiveCli(shape.family, shape.file, THREADS, WORK);
    const naiveRuns: Record<number, number[]> = { 5: [], 30: [] };
    for (let i = 0; i < ONE_OFF_RUNS; i++) for (const s of [5, 30]) naiveRuns[s].push(await cli.transcribe(clips[s]));
    const naive = { contender: cli.name, ms: { 5: median(naiveRuns[5]), 30: median(naiveRuns[30]) }, runs: naiveRuns };
    log(`${shapeName} ${cli.name}: 5 s ${fmt(naive.ms[5], 0)} ms, 30 s ${fmt(naive.ms[30], 0)} ms`);

    // 4. Cold start and memory.
    const cold = await coldStarts(shape);
    log(`${shapeName} cold start ours ${fmt(cold.oursMs)} ms, harness ${fmt(cold.harnessMs)} ms`);

    results.push({
      shape: shapeName, family: shape.family, overhead: over, encodeMs, encoderGflop: gflop,
      achievedGflops: gflop ? gflop / (encodeMs / 1000) : null,
      ceilingGflops: shape.encoder ? ceiling[shape.quant === 'f16' ? 'F16' : 'Q8_0'] ?? null : null,
      load: { ours: loadOurs, whisperServer: loadWs }, loadRatios, naive, cold,
    });
    // After every model, so a run cut short keeps what it measured (`--report` renders it).
    writeFileSync(path.join(OUT, `${name}.json`), JSON.stringify({ meta: meta(), results }, null, 2));
  }
  writeReport(name, meta(), results);
}

/** The Markdown report and SVG chart next to a results JSON. */
function writeReport(name: string, meta: Record<string, unknown>, results: Record<string, unknown>[]): void {
  const md = report(name, meta, results);
  writeFileSync(path.join(OUT, `${name}.md`), md);
  writeFileSync(path.join(OUT, `${name}.svg`), chartSvg(results as never));
  console.log(md);
}

function report(name: string, meta: Record<string, unknown>, results: Record<string, any>[]): string {
  const ratio = (a: number, b: number | null | undefined, digits = 2) => (b ? fmt(a / b, digits) : '—');
  /** A median with its spread: the 95 % interval for pairs, the min–max for rounds. */
  const withInterval = (xs: number[], digits = 3) => {
    if (xs.length < 2) return fmt(xs[0], digits);
    const [lo, hi] = xs.length >= 5 ? medianInterval(xs) : [Math.min(...xs), Math.max(...xs)];
    return `${fmt(median(xs), digits)} (${fmt(lo, digits)}–${fmt(hi, digits)})`;
  };
  const lines = [
    `# stt-gateway benchmark, ${meta.date}${meta.quick ? ' (quick)' : meta.full ? ' (full)' : ''}`,
    '',
    `Machine: ${meta.cpu}, ${meta.cores} cores; ${meta.threads} compute threads for every contender. ggml: \`${meta.ggml}\``,
    `Models: ${meta.weights ?? 'generated with exact shapes and random weights'}. Decoding: greedy, no temperature fallback, language en (Whisper); token cap for generated models: ${meta.tokenCap}.`,
    `Overhead: pairs of runs per model (${meta.reps}; ours and the harness back to back, alternating which goes first) after a warm-up of each; times are medians with min–max; a ratio is the median of the pairs' ratios with its 95 % distribution-free interval. Under load: ${meta.loadRounds}. Run time ${fmt(meta.durationS as number, 0)} s.`,
    '',
    '## Headline',
    '',
    '| model | overhead 30 s (ours ÷ harness) | added by the server, 30 s | throughput ÷ whisper-server | short p50 ÷ whisper-server | short p95 ÷ whisper-server | encoder GFLOP/s ÷ matmul ceiling |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    const o = r.overhead[30];
    const q = r.loadRatios;
    lines.push(`| ${r.shape} | ${withInterval(o.ratios)} | ${fmt(median(o.addedMs), 0)} ms (${fmt((100 * median(o.addedMs)) / median(o.harnessMs), 1)} %) | ` +
      `${q ? withInterval(q.throughput, 2) : r.family === 'parakeet' ? 'no Parakeet server in whisper.cpp' : 'in --full'} | ${q ? withInterval(q.shortP50, 2) : '—'} | ${q ? withInterval(q.shortP95, 2) : '—'} | ` +
      `${r.ceilingGflops ? `${fmt(r.achievedGflops, 0)} ÷ ${fmt(r.ceilingGflops, 0)} = ${fmt(r.achievedGflops / r.ceilingGflops, 2)}` : '—'} |`);
  }
  // The ratio is the same quantity for every model, and 5-6 pairs cannot resolve a few per cent on
  // this VM: every pair of every model together gives the tighter estimate.
  const pooled = results.flatMap((r) => r.overhead[30].ratios as number[]);
  if (results.length > 1) lines.push(`| every model pooled (${pooled.length} pairs) | ${withInterval(pooled)} | | | | | |`);
  lines.push('', '## Overhead: HTTP upload to response ÷ bare C++ harness (same library, same parameters)', '',
    '"Added by the server" is the client\'s time minus the addon call as the server logs it (`sttMs` in its request log): HTTP, multipart parsing, WAV decoding, queueing and rendering. "Inference in the server ÷ harness" is that addon call against the harness run of the same pair: it moves with this VM\'s 10-20 % drift, the added time does not.', '',
    '| model | clip | ours ms | harness ms | ours ÷ harness | added by the server ms | inference in the server ÷ harness |', '|---|---|---|---|---|---|---|');
  for (const r of results) {
    for (const [s, o] of Object.entries(r.overhead as Record<string, { oursMs: number[]; harnessMs: number[]; ratios: number[]; addedMs: number[]; inferenceRatios: number[] }>)) {
      lines.push(`| ${r.shape} | ${s} s | ${fmt(median(o.oursMs))} (${range(o.oursMs)}) | ${fmt(median(o.harnessMs))} (${range(o.harnessMs)}) | ${withInterval(o.ratios)} | ` +
        `${fmt(median(o.addedMs))} (${range(o.addedMs)}) | ${withInterval(o.inferenceRatios)} |`);
    }
  }
  lines.push('', `## Under load: ${CLIENTS} clients on loopback, ${LONG_CLIENTS} sending one 120-s clip each at once and, ${SHORT_START_DELAY_MS} ms later, ${CLIENTS - LONG_CLIENTS} sending ${SHORT_PER_CLIENT === 1 ? 'one 5-s clip' : `${SHORT_PER_CLIENT} 5-s clips`} each`, '',
    'stt-gateway runs with its defaults: one job computes at a time with every thread, shortest first; a 120-s job is paused after the ggml graph node in progress while a 5-s job runs (same output). whisper-server runs one request at a time with every thread, in arrival order. Figures are medians over rounds (min–max when there are several).', '',
    '| model | contender | rounds | throughput (audio s / wall s) | short p50 ms | short p95 ms | long p50 ms | peak RSS MB |', '|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    for (const L of [r.load.ours, r.load.whisperServer].filter(Boolean) as any[]) {
      const of = (k: string, digits: number) => withInterval(L.rounds.map((x: Record<string, number>) => x[k]), digits);
      lines.push(`| ${r.shape} | ${L.contender} | ${L.rounds.length} | ${of('throughput', 2)} | ${of('shortP50', 0)} | ${of('shortP95', 0)} | ${of('longP50', 0)} | ${fmt(L.rssBytes / 1e6, 0)} |`);
    }
  }
  lines.push('', 'A floor for the short-clip p50 of any server that gives each 5-s clip the same work: run the six one after another, the first at once, so the p50 (the 3rd of 6 here) finishes after 3 clips\' time. Taking a clip\'s time as ours under load (the spacing of our short-clip latencies):', '',
    '| model | one 5-s clip under load ms | floor p50 ms | floor ÷ whisper-server p50 | ours ÷ whisper-server p50 |', '|---|---|---|---|---|');
  for (const r of results) {
    const ws = r.load.whisperServer;
    if (!ws) continue;
    const perClip = median(r.load.ours.rounds.map((x: { shortSpacing: number }) => x.shortSpacing));
    const floor = percentile(r.load.ours.shortMs.slice(0, CLIENTS - LONG_CLIENTS).map((_: number, k: number) => (k + 1) * perClip), 50);
    lines.push(`| ${r.shape} | ${fmt(perClip, 0)} | ${fmt(floor, 0)} | ${ratio(floor, ws.shortP50)} | ${ratio(r.load.ours.shortP50, ws.shortP50)} |`);
  }
  /** A median of one-off runs with its min–max when there were several (older results kept only the value). */
  const oneOff = (value: number, runs?: number[]) => (runs && runs.length > 1 ? `${fmt(median(runs), 0)} (${range(runs, 0)})` : fmt(value, 0));
  const runsOf = `${meta.oneOffRuns ?? 1} run${(meta.oneOffRuns ?? 1) === 1 ? '' : 's'} each${meta.oneOffRuns && (meta.oneOffRuns as number) > 1 ? ', medians (min–max)' : ''}`;
  lines.push('', `## Naive wrapper: one CLI process per request (load the model, transcribe, exit), requests one at a time (${runsOf})`, '',
    '| model | contender | 5-s clip ms | 30-s clip ms | ours 30-s ms (median above) | ours ÷ naive, 30 s |', '|---|---|---|---|---|---|');
  for (const r of results) {
    const ours30 = median(r.overhead[30].oursMs);
    lines.push(`| ${r.shape} | ${r.naive.contender} | ${oneOff(r.naive.ms[5], r.naive.runs?.[5])} | ${oneOff(r.naive.ms[30], r.naive.runs?.[30])} | ${fmt(ours30, 0)} | ${ratio(ours30, r.naive.ms[30])} |`);
  }
  lines.push('', `## Cold start (process start to first 5-s transcription) and memory (${runsOf}${(meta.oneOffRuns as number) > 1 ? '; ours and the harness alternating which goes first' : ''})`, '',
    '| model | ours ms | harness ms | ours RSS MB | harness peak RSS MB |', '|---|---|---|---|---|');
  for (const r of results) {
    const runs = (k: string) => r.cold.runs?.map((c: Record<string, number>) => c[k]);
    lines.push(`| ${r.shape} | ${oneOff(r.cold.oursMs, runs('oursMs'))} | ${oneOff(r.cold.harnessMs, runs('harnessMs'))} | ${fmt(r.cold.oursRss / 1e6, 0)} | ${fmt(r.cold.harnessRss / 1e6, 0)} |`);
  }
  lines.push('', '## Encoder efficiency', '',
    'Encoder FLOPs per 30-s window (24·n·d² + 4·n²·d per layer, plus the convolutions) ÷ whisper.cpp\'s own encoder time for that window, against a 1024x1024x1024 `ggml_mul_mat` of the same weight type run by our harness (what `whisper-bench -w 2` measures, at one size). Parakeet: encoder time for the 30-s clip only.', '',
    '| model | GFLOP / window | encoder ms (30-s clip) | achieved GFLOP/s | ceiling GFLOP/s |', '|---|---|---|---|---|');
  for (const r of results) {
    lines.push(`| ${r.shape} | ${r.encoderGflop ? fmt(r.encoderGflop, 1) : '—'} | ${fmt(r.encodeMs, 0)} | ${r.achievedGflops ? fmt(r.achievedGflops, 0) : '—'} | ${r.ceilingGflops ? fmt(r.ceilingGflops, 0) : '—'} |`);
  }
  lines.push('', `![latency by scenario](./${name}.svg)`, '');
  return lines.join('\n');
}

/** `--report <results.json>`: renders the report of an earlier run again, without measuring. */
const rerender = process.argv.indexOf('--report');
const start = rerender >= 0
  ? async () => {
      const file = path.resolve(process.argv[rerender + 1]);
      const { meta, results } = JSON.parse(readFileSync(file, 'utf8'));
      writeReport(path.basename(file, '.json'), meta, results);
    }
  : main;

start().catch((err) => {
  console.error(err);
  process.exit(1);
});
