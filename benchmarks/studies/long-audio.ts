// `npx tsx benchmarks/studies/long-audio.ts [--model parakeet-0.6b-q8_0] [--lengths 30,60,120,240,480]`:
// where Parakeet's single pass over a whole clip blows up, against the
// pieces the engine cuts long audio into. parakeet.cpp encodes a clip longer
// than the model's context (n_audio_ctx mel frames, 50 s for
// parakeet-tdt-0.6b-v3) in one dynamic graph whose attention grows with the
// square of its length. Each run is its own process, so its peak RSS is its
// own; which of one pass and pieces runs first alternates per length. The model is generated
// (random weights in the exact 0.6B shape): time and memory depend on shapes,
// not on weights. Input: real speech (the shared corpus, repeated), 2 threads,
// built by the child (fixtures/long-audio-child.ts, input `looped-speech`).
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { makeModel, ROOT } from '../../fixtures';
import type { Job, Summary } from '../../fixtures/long-audio-child';
import { saveReport, today } from '../lib/results';
import { fmt } from '../lib/stats';

/** The child that builds the input, transcribes it once and reports its own peak RSS (test/native/long-audio.test.ts runs it too). */
const CHILD = path.join(ROOT, 'fixtures', 'long-audio-child.ts');

interface Run { ms?: number; maxRssKb?: number; segments?: number; error?: string; status: number | null }

function run(file: string, seconds: number, pieceSeconds: number): Run {
  const job: Job = { model: file, seconds, input: 'looped-speech', options: { threads: 2, pieceSeconds } };
  const r = spawnSync(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(job)], { encoding: 'utf8', maxBuffer: 1 << 26, cwd: ROOT });
  const line = r.stdout.split('\n').find((l) => l.startsWith('SUMMARY '));
  if (r.status !== 0 || !line) return { error: `exit ${r.status ?? r.signal}: ${r.stderr.trim().split('\n')[0]}`, status: r.status };
  const s = JSON.parse(line.slice('SUMMARY '.length)) as Summary;
  return { ms: s.transcribeSeconds * 1000, maxRssKb: s.maxRSS, segments: s.segments.length, status: r.status };
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
    `# Parakeet on long audio: one pass against pieces, ${today()}`, '',
    `\`npx tsx benchmarks/studies/long-audio.ts --model ${name} --lengths ${lengths.join(',')}\`: generated ${name} (random weights, exact shapes), the addon, 2 threads, ${os.cpus().length} cores (${os.cpus()[0]?.model}), ${fmt(os.totalmem() / 2 ** 30, 0)} GiB. Real speech (the shared corpus, repeated to length). Each run in its own process; peak RSS is the process's (model, audio and all).`, '',
    ...lines, '',
  ].join('\n');
  saveReport(`long-audio-${today()}-${name}`, md);
}

main().catch((err) => {
  process.stderr.write(`long-audio: ${(err as Error).stack}\n`);
  process.exit(1);
});
