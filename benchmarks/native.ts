// npm run bench:native — the addon against a bare C++ harness that links the
// same libwhisper/libparakeet with the same parameters, side by side in one
// run, on generated models of the exact base/small shapes (random weights:
// decoding is capped at the same token count for both).
//
// Prints: encode ms per 30-s window, decode ms per token, RSS per model and
// per extra state, addon/harness time ratio, and 2nd vs 10th request.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeWav, loadModel, systemInfo, type Model } from '../src/native';
import { makeWhisperModel, PARAKEET_FIXTURE } from '../scripts/make-models';
import { speechClip } from '../test/helpers/clips';
import { harness } from './lib/harness';
import { fmt, median, range } from './lib/stats';

const THREADS = Number(process.env.BENCH_THREADS ?? Math.min(4, os.availableParallelism()));
const REPS = Number(process.env.BENCH_REPS ?? 3);
const DECODE_TOKENS = 32;
const quick = process.argv.includes('--quick');
const WORK = path.resolve(__dirname, '.work');

interface Row {
  model: string;
  encodeMs: number[];
  decodeMsPerToken: number;
  tokens: number;
  addonMs: number[];
  harnessMs: number[];
  ratio: number;
  rssModelMb: number;
  rssStateMb: number;
  secondVsTenth: number;
}

async function timeAddon(model: Model, pcm: Float32Array, maxTokens: number): Promise<{ ms: number; tokens: number }> {
  const t = process.hrtime.bigint();
  const r = await model.transcribe(pcm, { threads: THREADS, language: 'en', temperatureFallback: false, maxTokens });
  return { ms: Number(process.hrtime.bigint() - t) / 1e6, tokens: r.segments.reduce((n, s) => n + s.tokens.length, 0) };
}

/** Memory is measured in a fresh process per model so one model's pages do not blur another's. */
function measureRss(file: string): Promise<{ model: number; state: number }> {
  const script = `
    const { loadModel, decodeWav } = require(${JSON.stringify(path.resolve(__dirname, '../src/native'))});
    const wav = require('node:fs').readFileSync(${JSON.stringify(path.join(WORK, 'clip-30.wav'))});
    (async () => {
      const audio = await decodeWav(wav);
      global.gc && global.gc();
      const r0 = process.memoryUsage().rss;
      const m = await loadModel(${JSON.stringify(file)});
      const r1 = process.memoryUsage().rss;
      const o = { threads: 1, language: 'en', temperatureFallback: false, maxTokens: 1 };
      await m.transcribe(audio.pcm, o);
      const r2 = process.memoryUsage().rss;
      await Promise.all([m.transcribe(audio.pcm, o), m.transcribe(audio.pcm, o)]);
      const r3 = process.memoryUsage().rss;
      process.stdout.write(JSON.stringify({ model: r1 - r0, state: r3 - r2, states: m.stats().statesCreated }));
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
  await timeAddon(model, pcm, 1); // warm-up (creates the state)
  const addonEncode: number[] = [], harnessEncode: number[] = [];
  const addonFull: number[] = [], harnessFull: number[] = [];
  let tokensCapped = 0, tokensOne = 0;
  // A/B interleaved in blocks: harness (warm-up run discarded), then addon, twice.
  for (let block = 0; block < 2; block++) {
    for (const [cap, addonList, harnessList] of [[1, addonEncode, harnessEncode], [DECODE_TOKENS, addonFull, harnessFull]] as const) {
      const h = await harness(family, file, wav, THREADS, REPS + 1, cap);
      harnessList.push(...h.runs.slice(1).map((r) => r.ms));
      for (let i = 0; i < REPS; i++) {
        const a = await timeAddon(model, pcm, cap);
        addonList.push(a.ms);
        if (cap === 1) tokensOne = a.tokens;
        else tokensCapped = a.tokens;
      }
      process.stderr.write('.');
    }
  }
  // State reuse: the 2nd request of a fresh model against its 10th.
  const fresh = await loadModel(file);
  const seq: number[] = [];
  for (let i = 0; i < 10; i++) seq.push((await timeAddon(fresh, pcm, 1)).ms);
  fresh.dispose();
  model.dispose();
  const rss = await measureRss(file);
  process.stderr.write(' done\n');
  const extraTokens = Math.max(1, tokensCapped - tokensOne);
  return {
    model: name,
    encodeMs: addonEncode,
    decodeMsPerToken: (median(addonFull) - median(addonEncode)) / extraTokens,
    tokens: tokensCapped,
    addonMs: [...addonEncode, ...addonFull],
    harnessMs: [...harnessEncode, ...harnessFull],
    ratio: (median(addonEncode) + median(addonFull)) / (median(harnessEncode) + median(harnessFull)),
    rssModelMb: rss.model / 1e6,
    rssStateMb: rss.state / 1e6,
    secondVsTenth: seq[1] / seq[9],
  };
}

async function main(): Promise<void> {
  mkdirSync(WORK, { recursive: true });
  const wav = path.join(WORK, 'clip-30.wav');
  writeFileSync(wav, speechClip(30));
  const pcm = (await decodeWav(readFileSync(wav))).pcm;
  const shapes = quick ? ['base-q8_0'] : ['base-f16', 'base-q8_0', 'small-f16', 'small-q8_0'];
  const rows: Row[] = [];
  for (const s of shapes) rows.push(await benchModel(s, await makeWhisperModel(s), 'whisper', wav, pcm));
  rows.push(await benchModel('parakeet (tiny fixture)', PARAKEET_FIXTURE, 'parakeet', wav, pcm));

  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const lines = [
    `Machine: ${cpu}, ${os.availableParallelism()} cores; ${THREADS} threads per job; ${REPS}x2 repetitions after warm-up, medians (min–max).`,
    `ggml: ${systemInfo().trim()}`,
    `Decoding capped at ${DECODE_TOKENS} tokens per segment for both sides (random weights); 30-s clip from ../shared/audio.`,
    '',
    '| model | encode ms / 30-s window | decode ms / token | addon ÷ harness | RSS model MB | RSS per extra state MB | 2nd ÷ 10th request |',
    '|---|---|---|---|---|---|---|',
    ...rows.map((r) =>
      `| ${r.model} | ${fmt(median(r.encodeMs))} (${range(r.encodeMs)}) | ${fmt(r.decodeMsPerToken, 2)} | ${fmt(r.ratio, 3)} | ${fmt(r.rssModelMb)} | ${fmt(r.rssStateMb)} | ${fmt(r.secondVsTenth, 2)} |`),
  ];
  console.log(lines.join('\n'));
  const out = path.resolve(__dirname, 'results');
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, `native-${new Date().toISOString().slice(0, 10)}.json`), JSON.stringify({ cpu, threads: THREADS, reps: REPS, rows }, null, 2));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
