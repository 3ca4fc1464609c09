// npm run bench [-- --quick] — this server against whisper.cpp's own tools,
// side by side in one run, on generated models of exact shapes. Writes
// benchmarks/results/<date>.json, a Markdown report and an SVG chart.
//
// Random weights make decoders run to their cap. The generated models keep
// the exact encoder and decoder shapes but a decoder context of 64, so every
// contender stops at the same 28 tokens per window (whisper.cpp's
// n_text_ctx/2 - 4); greedy, no temperature fallback, language en, the same
// thread count.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { systemInfo } from '../src/native';
import { makeWhisperModel } from '../scripts/make-models';
import { speechClip } from '../test/helpers/clips';
import { harness, requireBin } from './lib/harness';
import { naiveCli, startOurs, startWhisperServer, type Contender } from './lib/servers';
import { fmt, median, percentile, range } from './lib/stats';
import { chartSvg } from './lib/chart';

const quick = process.argv.includes('--quick');
const THREADS = Number(process.env.BENCH_THREADS ?? os.availableParallelism());
const REPS = quick ? 2 : 5;
const SHAPES = quick ? ['base-q8_0-ctx64'] : ['base-q8_0-ctx64', 'base-f16-ctx64', 'small-q8_0-ctx64'];
const WORK = path.resolve(__dirname, '.work');
const OUT = path.resolve(__dirname, 'results');
const run = promisify(execFile);

const clips: Record<number, Buffer> = {};
const clipFile = (s: number) => path.join(WORK, `clip-${s}.wav`);

interface LoadResult {
  contender: string;
  wallS: number;
  audioS: number;
  throughput: number;
  shortMs: number[];
  longMs: number[];
  rssBytes: number;
}

/** n clients on loopback: `long` of them send 120-s clips, the rest 5-s clips, `perClient` requests each. */
async function load(c: Contender, clients: number, long: number, perClient: number): Promise<LoadResult> {
  const shortMs: number[] = [], longMs: number[] = [];
  let audio = 0;
  let rss = 0;
  const sampler = setInterval(() => (rss = Math.max(rss, c.rssBytes())), 200);
  const t = process.hrtime.bigint();
  await Promise.all(Array.from({ length: clients }, async (_, i) => {
    const isLong = i < long;
    for (let k = 0; k < perClient; k++) {
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
async function matmulCeiling(): Promise<{ gflops: Record<string, number> }> {
  const { stdout } = await run(requireBin('stt-harness'), ['matmul', String(THREADS), '1024']);
  const gflops: Record<string, number> = {};
  for (const line of stdout.trim().split('\n')) {
    const e = JSON.parse(line);
    gflops[String(e.type).toUpperCase()] = e.gflops;
  }
  return { gflops };
}

async function coldStart(model: string): Promise<{ oursMs: number; oursRss: number; harnessMs: number; harnessRss: number }> {
  const ours = await startOurs({ modelFile: model, threads: THREADS, parallel: 1 });
  await ours.transcribe(clips[5]);
  const oursMs = Number(process.hrtime.bigint() - ours.startedAt) / 1e6;
  const oursRss = ours.rssBytes();
  await ours.stop();
  const t = process.hrtime.bigint();
  const h = await harness('whisper', model, clipFile(5), THREADS, 1);
  return { oursMs, oursRss, harnessMs: Number(process.hrtime.bigint() - t) / 1e6, harnessRss: h.maxRssBytes };
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
  log(`matmul ceiling ${JSON.stringify(ceiling.gflops)}`);
  const results: Record<string, unknown>[] = [];

  for (const shape of SHAPES) {
    const model = await makeWhisperModel(shape);
    const [size, quant] = shape.split('-'); // e.g. base, q8_0
    const state = size === 'base' ? 512 : 768;
    const layers = size === 'base' ? 6 : 12;

    // 1. Overhead: HTTP end to end against the bare harness, interleaved; one job at a time with every thread.
    const ours = await startOurs({ modelFile: model, threads: THREADS, parallel: 1 });
    await ours.transcribe(clips[5]); // warm-up
    const overhead: Record<number, { oursMs: number[]; harnessMs: number[] }> = {};
    for (const s of quick ? [30] : [5, 30]) {
      overhead[s] = { oursMs: [], harnessMs: [] };
      for (let r = 0; r < REPS; r++) {
        const h = await harness('whisper', model, clipFile(s), THREADS, 2);
        overhead[s].harnessMs.push(h.runs[1].ms);
        overhead[s].oursMs.push(await ours.transcribe(clips[s]));
      }
      log(`${shape} overhead ${s}s: ours ${fmt(median(overhead[s].oursMs))} ms, harness ${fmt(median(overhead[s].harnessMs))} ms`);
    }
    // 5. Encoder efficiency: whisper.cpp's own encoder timing for one 30-s window (same library as ours).
    const timed = await harness('whisper', model, clipFile(30), THREADS, 3);
    const encodeMs = median(timed.runs.slice(1).map((r) => r.encodeMs ?? r.ms));
    const gflop = encoderGflop(state, layers);
    const achieved = gflop / (encodeMs / 1000);
    const ceilingType = quant === 'f16' ? 'F16' : 'Q8_0';

    await ours.stop();
    // 2 & 3. Under load: 8 clients (2 long, 6 short), ours (default slots) vs whisper-server vs whisper-cli per request.
    const clients = 8, long = 2, perClient = 1;
    const loaded = await startOurs({ modelFile: model, threads: THREADS, parallel: Math.min(2, THREADS) });
    await loaded.transcribe(clips[5]);
    const loadOurs = await load(loaded, clients, long, perClient);
    await loaded.stop();
    log(`${shape} load ours: ${fmt(loadOurs.throughput, 2)} audio s/s`);
    const ws = await startWhisperServer(model, THREADS);
    await ws.transcribe(clips[5]);
    const loadWs = await load(ws, clients, long, perClient);
    await ws.stop();
    log(`${shape} load whisper-server: ${fmt(loadWs.throughput, 2)} audio s/s`);
    // Quick mode spares the naive baseline the two 120-s clients (one process per request is slow).
    const loadNaive = await load(naiveCli(model, THREADS, WORK), quick ? clients - long : clients, quick ? 0 : long, 1);
    log(`${shape} load whisper-cli per request: ${fmt(loadNaive.throughput, 2)} audio s/s`);

    // 4. Cold start and memory.
    const cold = await coldStart(model);
    log(`${shape} cold start ours ${fmt(cold.oursMs)} ms, harness ${fmt(cold.harnessMs)} ms`);

    results.push({ shape, overhead, encodeMs, encoderGflop: gflop, achievedGflops: achieved, ceilingGflops: ceiling.gflops[ceilingType] ?? null,
      load: { ours: loadOurs, whisperServer: loadWs, naive: loadNaive }, cold });
  }

  const cpu = os.cpus()[0]?.model ?? 'unknown';
  const date = new Date().toISOString().slice(0, 10);
  const meta = { date, cpu, cores: os.availableParallelism(), threads: THREADS, quick, reps: REPS, ggml: systemInfo().trim(),
    tokenCap: 'generated models have n_text_ctx = 64, so every contender stops at 28 tokens per 30-s window', durationS: (Date.now() - started) / 1000 };
  const name = quick ? `${date}-quick` : date;
  writeFileSync(path.join(OUT, `${name}.json`), JSON.stringify({ meta, results }, null, 2));
  const md = report(meta, results);
  writeFileSync(path.join(OUT, `${name}.md`), md);
  writeFileSync(path.join(OUT, `${name}.svg`), chartSvg(results as never));
  console.log(md);
}

function report(meta: Record<string, unknown>, results: Record<string, any>[]): string {
  const lines = [
    `# stt-gateway benchmark, ${meta.date}${meta.quick ? ' (quick)' : ''}`,
    '',
    `Machine: ${meta.cpu}, ${meta.cores} cores; ${meta.threads} compute threads for every contender. ggml: \`${meta.ggml}\``,
    `Models: generated with exact shapes and random weights. Decoding: greedy, no temperature fallback, language en; token cap: ${meta.tokenCap}.`,
    `Medians of ${meta.reps} interleaved repetitions after a warm-up, with min–max. Run time ${fmt(meta.durationS as number, 0)} s.`,
    '',
    '## Headline',
    '',
    '| model | overhead 30 s (ours ÷ harness) | throughput ÷ whisper-server | short p50 ÷ whisper-server | short p95 ÷ whisper-server | encoder GFLOP/s ÷ matmul ceiling |',
    '|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    const o = r.overhead[30];
    const L = r.load;
    lines.push(`| ${r.shape} | ${fmt(median(o.oursMs) / median(o.harnessMs), 3)} | ${fmt(L.ours.throughput / L.whisperServer.throughput, 2)} | ` +
      `${fmt(percentile(L.ours.shortMs, 50) / percentile(L.whisperServer.shortMs, 50), 2)} | ${fmt(percentile(L.ours.shortMs, 95) / percentile(L.whisperServer.shortMs, 95), 2)} | ` +
      `${r.ceilingGflops ? `${fmt(r.achievedGflops, 0)} ÷ ${fmt(r.ceilingGflops, 0)} = ${fmt(r.achievedGflops / r.ceilingGflops, 2)}` : '—'} |`);
  }
  lines.push('', '## Overhead: HTTP upload to response ÷ bare C++ harness (same library, same parameters)', '',
    '| model | clip | ours ms | harness ms | ratio |', '|---|---|---|---|---|');
  for (const r of results) {
    for (const [s, o] of Object.entries(r.overhead as Record<string, { oursMs: number[]; harnessMs: number[] }>)) {
      lines.push(`| ${r.shape} | ${s} s | ${fmt(median(o.oursMs))} (${range(o.oursMs)}) | ${fmt(median(o.harnessMs))} (${range(o.harnessMs)}) | ${fmt(median(o.oursMs) / median(o.harnessMs), 3)} |`);
    }
  }
  lines.push('', '## Under load: 8 clients on loopback, 2 sending 120-s clips and 6 sending 5-s clips', '',
    'stt-gateway runs with its defaults (2 slots of 1 thread here; long clips never hold every slot); whisper-server runs one request at a time with every thread.' +
      (meta.quick ? ' Quick mode: the whisper-cli baseline gets only the 6 short-clip clients.' : ''), '',
    '| model | contender | throughput (audio s / wall s) | short p50 ms | short p95 ms | long p50 ms | peak RSS MB |', '|---|---|---|---|---|---|---|');
  for (const r of results) {
    for (const L of [r.load.ours, r.load.whisperServer, r.load.naive].filter(Boolean)) {
      lines.push(`| ${r.shape} | ${L.contender} | ${fmt(L.throughput, 2)} | ${fmt(percentile(L.shortMs, 50), 0)} | ${fmt(percentile(L.shortMs, 95), 0)} | ${fmt(percentile(L.longMs, 50), 0)} | ${fmt(L.rssBytes / 1e6, 0)} |`);
    }
  }
  lines.push('', '## Cold start (process start to first 5-s transcription) and memory', '',
    '| model | ours ms | harness ms | ours RSS MB | harness peak RSS MB |', '|---|---|---|---|---|');
  for (const r of results) lines.push(`| ${r.shape} | ${fmt(r.cold.oursMs, 0)} | ${fmt(r.cold.harnessMs, 0)} | ${fmt(r.cold.oursRss / 1e6, 0)} | ${fmt(r.cold.harnessRss / 1e6, 0)} |`);
  lines.push('', '## Encoder efficiency', '',
    'Encoder FLOPs per 30-s window (24·n·d² + 4·n²·d per layer, plus the convolutions) ÷ whisper.cpp\'s own encoder time for that window, against a 1024x1024x1024 `ggml_mul_mat` of the same weight type run by our harness (what `whisper-bench -w 2` measures, at one size).', '',
    '| model | GFLOP / window | window ms | achieved GFLOP/s | ceiling GFLOP/s |', '|---|---|---|---|---|');
  for (const r of results) lines.push(`| ${r.shape} | ${fmt(r.encoderGflop, 1)} | ${fmt(r.encodeMs, 0)} | ${fmt(r.achievedGflops, 0)} | ${r.ceilingGflops ? fmt(r.ceilingGflops, 0) : '—'} |`);
  lines.push('', `![latency by scenario](./${meta.quick ? `${meta.date}-quick` : meta.date}.svg)`, '');
  return lines.join('\n');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
