// `npx tsx benchmarks/long-audio.ts [--model parakeet-0.6b-q8_0] [--lengths 30,60,120,240,480]`:
// where Parakeet's single pass over a whole clip blows up, against the
// pieces the engine cuts long audio into. parakeet.cpp encodes a clip longer
// than the model's context (n_audio_ctx mel frames, 50 s for
// parakeet-tdt-0.6b-v3) in one dynamic graph whose attention grows with the
// square of its length. Each run is its own process, so its peak RSS is its
// own; which of one pass and pieces runs first alternates per length. The model is generated
// (random weights in the exact 0.6B shape): time and memory depend on shapes,
// not on weights. Input: real speech (the shared corpus, repeated), 2 threads.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeModel } from '../scripts/make-models';
import { fmt } from './lib/stats';

const CHILD = `
const { loadModel } = require(${JSON.stringify(path.join(__dirname, '..', 'src', 'native'))});
const { longClip } = require(${JSON.stringify(path.join(__dirname, '..', 'test', 'helpers', 'long-clip'))});
const { readPcm16Mono } = require(${JSON.stringify(path.join(__dirname, '..', 'test', 'helpers', 'wav-writer'))});
(async () => {
  const [file, seconds, pieceSeconds] = process.argv.slice(1).map((a, i) => (i ? Number(a) : a));
  const once = readPcm16Mono(longClip(Math.min(seconds, 600)).wav).samples;
  const pcm = new Float32Array(seconds * 16000);
  for (let at = 0; at < pcm.length; at += once.length) pcm.set(once.subarray(0, Math.min(once.length, pcm.length - at)), at);
  const model = await loadModel(file);
  const t0 = performance.now();
  const r = await model.transcribe(pcm, { threads: 2, pieceSeconds });
  const ms = performance.now() - t0;
  await model.dispose();
  console.log(JSON.stringify({ ms, maxRssKb: process.resourceUsage().maxRSS, segments: r.segments.length }));
})().catch((e) => { console.log(JSON.stringify({ error: e.message })); process.exit(1); });
`;

interface Run { ms?: number; maxRssKb?: number; segments?: number; error?: string; status: number | null }

function run(file: string, seconds: number, pieceSeconds: number): Run {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', CHILD, file, String(seconds), String(pieceSeconds)], {
    encoding: 'utf8', maxBuffer: 1 << 24, cwd: path.join(__dirname, '..'),
  });
  const line = r.stdout.trim().split('\n').pop() ?? '';
  try {
    return { ...JSON.parse(line), status: r.status };
  } catch {
    return { error: `exit ${r.status ?? r.signal}: ${r.stderr.trim().split('\n').pop()}`, status: r.status };
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const name = args.includes('--model') ? args[args.indexOf('--model') + 1] : 'parakeet-0.6b-q8_0';
  const lengths = (args.includes('--lengths') ? args[args.indexOf('--lengths') + 1] : '30,60,120,240,480').split(',').map(Number);
  const file = await makeModel(name);
  const lines = ['| audio | one pass: time, RTF, peak RSS | pieces: time, RTF, peak RSS, segments | one pass ÷ pieces: time, RSS |', '| --- | --- | --- | --- |'];
  for (const seconds of lengths) {
    // One pass: a piece as long as the clip. Pieces: the default (the model's context).
    // Alternating which runs first, so neither always meets the warmer page cache.
    const first = lengths.indexOf(seconds) % 2 === 0;
    const a = run(file, seconds, first ? seconds + 1 : 0);
    const b = run(file, seconds, first ? 0 : seconds + 1);
    const [single, pieces] = first ? [a, b] : [b, a];
    const cell = (r: Run) => (r.error ? `failed: ${r.error}` : `${fmt(r.ms! / 1000, 1)} s, ${fmt(r.ms! / 1000 / seconds, 3)}, ${fmt(r.maxRssKb! / 1024, 0)} MB`);
    const ratio = single.error || pieces.error ? '—' : `${fmt(single.ms! / pieces.ms!, 2)}, ${fmt(single.maxRssKb! / pieces.maxRssKb!, 2)}`;
    lines.push(`| ${seconds} s | ${cell(single)} | ${cell(pieces)}${pieces.error ? '' : `, ${pieces.segments}`} | ${ratio} |`);
    process.stdout.write(`${lines[lines.length - 1]}\n`);
  }
  const md = [
    `# Parakeet on long audio: one pass against pieces, ${new Date().toISOString().slice(0, 10)}`, '',
    `\`npx tsx benchmarks/long-audio.ts --model ${name} --lengths ${lengths.join(',')}\`: generated ${name} (random weights, exact shapes), the addon, 2 threads, ${os.cpus().length} cores (${os.cpus()[0]?.model}), ${fmt(os.totalmem() / 2 ** 30, 0)} GiB. Real speech (the shared corpus, repeated to length). Each run in its own process; peak RSS is the process's (model, audio and all).`, '',
    ...lines, '',
  ].join('\n');
  const out = path.join(__dirname, 'results', `long-audio-${new Date().toISOString().slice(0, 10)}-${name}.md`);
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, md);
  process.stdout.write(md + `\nreport: ${out}\n`);
}

main().catch((err) => {
  process.stderr.write(`long-audio: ${(err as Error).stack}\n`);
  process.exit(1);
});
