// npm run bench:native — the addon against a bare C++ harness that links the
// same libwhisper/libparakeet with the same parameters (greedy, language en,
// no temperature fallback, same threads, the model's own token cap), side by
// side in one run, on generated models of the exact base/small shapes.
//
// Prints: encode ms per 30-s window and decode ms per token (whisper.cpp's own
// timings), RSS per model and per extra state, the addon ÷ harness time ratio,
// and the 2nd request against the 10th.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeWav, loadModel, systemInfo, type Model } from '../src/native';
import { speechClip } from '../fixtures';
import { benchModel as modelFor } from './lib/models';
import { HarnessSession, pairWithHarness } from './lib/harness';
import { saveReport, today } from './lib/results';
import { provenance, commitState } from './lib/provenance';
import { fmt, median, medianInterval, range } from './lib/stats';

const THREADS = Number(process.env.BENCH_THREADS ?? Math.min(4, os.availableParallelism()));
/**
 * Pairs of runs per model. This VM's speed moves 10-20 % from run to run, so
 * the cheap base shapes get twice the pairs for a tighter interval; BENCH_PAIRS
 * sets one count for all.
 */
const pairsFor = (shape: string) => Number(process.env.BENCH_PAIRS ?? (shape.startsWith('base') ? 16 : 8));
const quick = process.argv.includes('--quick');
const WORK = path.resolve(__dirname, '.work');
/** The shape of the harness-against-harness control (the cheapest to repeat). */
const CONTROL_SHAPE = 'base-q8_0-ctx64';
const OPTIONS = { threads: THREADS, language: 'en', temperatureFallback: false } as const;

interface Row {
  model: string;
  encodeMs: number | null;
  decodeMsPerToken: number | null;
  tokens: number;
  addonMs: number[];
  harnessMs: number[];
  ratio: number;
  /** 95 % interval of the median ratio. */
  ratioInterval: [number, number];
  rssModelMb: number;
  rssStateMb: number;
}

async function timeAddon(model: Model, pcm: Float32Array): Promise<{ ms: number; tokens: number }> {
  const t = process.hrtime.bigint();
  const r = await model.transcribe(pcm, OPTIONS);
  return { ms: Number(process.hrtime.bigint() - t) / 1e6, tokens: r.segments.reduce((n, s) => n + s.tokens.length, 0) };
}

/** Memory is measured in a fresh process per model so one model's pages do not blur another's. */
function measureRss(file: string, wav: string): Promise<{ model: number; state: number }> {
  const script = `
    const { loadModel, decodeWav } = require(${JSON.stringify(path.resolve(__dirname, '../src/native'))});
    (async () => {
      const audio = await decodeWav(require('node:fs').readFileSync(${JSON.stringify(wav)}));
      const r0 = process.memoryUsage().rss;
      const m = await loadModel(${JSON.stringify(file)});
      const r1 = process.memoryUsage().rss;
      const o = ${JSON.stringify({ ...OPTIONS, threads: 1 })};
      await m.transcribe(audio.pcm, o);
      const r2 = process.memoryUsage().rss;
      await Promise.all([m.transcribe(audio.pcm, o), m.transcribe(audio.pcm, o)]);
      const r3 = process.memoryUsage().rss;
      process.stdout.write(JSON.stringify({ model: r1 - r0, state: r3 - r2 }));
    })();`;
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`rss probe exited ${code}`))));
  });
}

async function benchModel(name: string, file: string, family: 'whisper' | 'parakeet', wav: string, pcm: Float32Array): Promise<Row> {
  process.stderr.write(`${name}: `);
  const model = await loadModel(file);
  const session = new HarnessSession(family, file, wav, THREADS);
  await session.ready();
  await session.run(); // warm-ups
  const warm = await timeAddon(model, pcm);
  const pairs = await pairWithHarness(session, pairsFor(name), () => timeAddon(model, pcm), () => process.stderr.write('.'));
  await session.close();
  const encode = pairs.harness.flatMap((h) => h.encodeMs ?? []);
  const decode = pairs.harness.flatMap((h) => h.decodeMsPerToken ?? []);
  model.dispose();
  const rss = await measureRss(file, path.join(WORK, 'clip-5.wav'));
  process.stderr.write(' done\n');
  return {
    model: name,
    encodeMs: encode.length ? median(encode) : null,
    decodeMsPerToken: decode.length ? median(decode) : null,
    tokens: warm.tokens,
    addonMs: pairs.oursMs,
    harnessMs: pairs.harness.map((h) => h.ms),
    ratio: median(pairs.ratios),
    ratioInterval: medianInterval(pairs.ratios),
    rssModelMb: rss.model / 1e6,
    rssStateMb: rss.state / 1e6,
  };
}

/**
 * The instrument's own resolution: the harness against a second harness
 * process with the same model, paired exactly as the addon is. Whatever
 * spread this shows is the machine's, not the addon's.
 */
async function harnessVsHarness(family: 'whisper' | 'parakeet', file: string, wav: string, n: number): Promise<number[]> {
  const a = new HarnessSession(family, file, wav, THREADS);
  const b = new HarnessSession(family, file, wav, THREADS);
  await Promise.all([a.ready(), b.ready()]);
  await a.run();
  await b.run();
  const pairs = await pairWithHarness(a, n, () => b.run());
  await Promise.all([a.close(), b.close()]);
  return pairs.ratios;
}

/**
 * State reuse: a fresh model's 2nd request against the 10th-or-later request
 * of a model that has served nine already, run back to back (alternating
 * which goes first) so the VM's drift hits both alike; one fresh model per
 * round. Also how many states a model created over its requests.
 */
async function secondVsTenth(file: string, pcm: Float32Array, rounds = 8): Promise<{ first: number[]; second: number[]; tenth: number[]; ratios: number[]; statesCreated: number }> {
  const used = await loadModel(file);
  for (let i = 0; i < 9; i++) await timeAddon(used, pcm);
  const out = { first: [] as number[], second: [] as number[], tenth: [] as number[], ratios: [] as number[], statesCreated: 0 };
  for (let round = 0; round < rounds; round++) {
    const fresh = await loadModel(file);
    out.first.push((await timeAddon(fresh, pcm)).ms);
    let second: number, tenth: number;
    if (round % 2 === 0) {
      second = (await timeAddon(fresh, pcm)).ms;
      tenth = (await timeAddon(used, pcm)).ms;
    } else {
      tenth = (await timeAddon(used, pcm)).ms;
      second = (await timeAddon(fresh, pcm)).ms;
    }
    out.second.push(second);
    out.tenth.push(tenth);
    out.ratios.push(second / tenth);
    fresh.dispose();
  }
  out.statesCreated = used.stats().statesCreated;
  used.dispose();
  return out;
}

async function main(): Promise<void> {
  // Read before the run: the report names the commit and tree the numbers came from.
  const prov = provenance();
  mkdirSync(WORK, { recursive: true });
  const wav = path.join(WORK, 'clip-30.wav');
  writeFileSync(wav, speechClip(30));
  writeFileSync(path.join(WORK, 'clip-5.wav'), speechClip(5));
  const pcm = (await decodeWav(readFileSync(wav))).pcm;
  const shapes = quick
    ? ['base-q8_0-ctx64', 'parakeet-0.6b-q8_0']
    : ['base-f16-ctx64', 'base-q8_0-ctx64', 'small-f16-ctx64', 'small-q8_0-ctx64', 'parakeet-0.6b-f16', 'parakeet-0.6b-q8_0'];
  const rows: Row[] = [];
  const realShapes: string[] = [];
  for (const s of shapes) {
    const model = await modelFor(s);
    if (model.weights === 'real') realShapes.push(s);
    rows.push(await benchModel(s, model.file, s.startsWith('parakeet') ? 'parakeet' : 'whisper', wav, pcm));
  }
  const control = await harnessVsHarness('whisper', (await modelFor(CONTROL_SHAPE)).file, wav, pairsFor(CONTROL_SHAPE));
  const pooled = rows.flatMap((r) => r.addonMs.map((ms, i) => ms / r.harnessMs[i]));
  const seq = await secondVsTenth((await modelFor('base-q8_0-ctx64')).file, (await decodeWav(readFileSync(path.join(WORK, 'clip-5.wav')))).pcm);

  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const lines = [
    `\`npm run bench:native${quick ? ' -- --quick' : ''}\` on commit ${commitState(prov)}; ` +
      `addon sha256 ${prov.binaries['stt_native.node']}, stt-harness sha256 ${prov.binaries['stt-harness'] ?? 'not found'}.`,
    `Machine: ${cpu}, ${os.availableParallelism()} cores; ${THREADS} threads per job; ${rows.map((r) => r.addonMs.length).join('/')} pairs of runs per model (harness and addon back to back, alternating which goes first) after a warm-up of each; times are medians (min–max); the ratio is the median of the pairs' ratios with its 95 % distribution-free interval (order statistics; with 8 pairs, the min–max).`,
    `ggml: ${systemInfo().trim()}`,
    `Models: ${realShapes.length ? `${realShapes.join(', ')}: the real Whisper weights (npm run models:real), decoding until end of text; the others: ` : ''}exact Whisper base/small weight shapes with random weights and a decoder context of 64, so both sides stop at 28 tokens per 30-s window (random weights never stop early); exact Parakeet TDT 0.6B shapes whose joint bias emits one token per 320 ms (about real speech). Greedy, language en (Whisper), no temperature fallback; 30-s clip from ../shared/audio.`,
    'Parakeet encodes the whole clip in one pass; its "decode ms / token" is everything after the encoder (prediction + joint, and the mel spectrogram) per token.',
    '',
    '| model | encode ms / 30-s window | decode ms / token | tokens | addon ms | harness ms | addon ÷ harness (95 % interval) | RSS model MB | RSS per extra state MB |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) =>
      `| ${r.model} | ${r.encodeMs === null ? '—' : fmt(r.encodeMs)} | ${r.decodeMsPerToken === null ? '—' : fmt(r.decodeMsPerToken, 2)} | ${r.tokens} | ` +
      `${fmt(median(r.addonMs), 0)} (${range(r.addonMs, 0)}) | ${fmt(median(r.harnessMs), 0)} (${range(r.harnessMs, 0)}) | ${fmt(r.ratio, 3)} (${fmt(r.ratioInterval[0], 3)}–${fmt(r.ratioInterval[1], 3)}) | ${fmt(r.rssModelMb)} | ${fmt(r.rssStateMb)} |`),
    '',
    `Every pair of every model pooled (${pooled.length} pairs): addon ÷ harness ${fmt(median(pooled), 3)} (95 % interval ${fmt(medianInterval(pooled)[0], 3)}–${fmt(medianInterval(pooled)[1], 3)}). ` +
      `Control, the harness against a second harness process (${CONTROL_SHAPE}, ${control.length} pairs, paired the same way): ${fmt(median(control), 3)} (${fmt(medianInterval(control)[0], 3)}–${fmt(medianInterval(control)[1], 3)}), ` +
      `pairs ranging ${range(control, 3)}: the resolution of this machine, against which the addon's rows are read.`,
    '',
    `State reuse (base-q8_0-ctx64, 5-s clip; ${seq.ratios.length} fresh models, each one's 2nd request run back to back with the 10th-or-later request of a model that had served nine): ` +
      `1st ${fmt(median(seq.first), 0)} ms (creates the state), 2nd ${fmt(median(seq.second), 0)} ms, 10th-or-later ${fmt(median(seq.tenth), 0)} ms; ` +
      `2nd ÷ 10th, per pair: ${fmt(median(seq.ratios), 3)} (${fmt(medianInterval(seq.ratios)[0], 3)}–${fmt(medianInterval(seq.ratios)[1], 3)}); ` +
      `states created by the model that served ${9 + seq.ratios.length} requests: ${seq.statesCreated}.`,
  ];
  saveReport(`native-${today()}${quick ? '-quick' : ''}`, lines.join('\n') + '\n',
    { provenance: prov, cpu, threads: THREADS, rows, pooledRatios: pooled, harnessVsHarnessRatios: control, secondVsTenthMs: seq });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
