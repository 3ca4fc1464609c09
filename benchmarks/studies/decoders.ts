// `npx tsx benchmarks/studies/decoders.ts [--rounds N] [--minutes M] [--name NAME]`: what
// decoding an upload costs, per format. jfk.wav repeated to M minutes (10 by
// default), encoded as each format a client sends (sox, opusenc), decoded
// through the server's entry (src/audio/decode-audio.ts) N times in turn.
// Reports per format: the median time (range over rounds), how many times
// faster than real time, and for the decoders that run on the event loop
// (Ogg, WebM: WebAssembly) the longest the loop was held at once, measured by
// perf_hooks' event-loop delay histogram during the decode. The native
// decoders run on the libuv pool, so the loop is free while they work.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { decodeAudio } from '../../src/audio/decode-audio';
import { AUDIO_DIR, encodedAudio } from '../../fixtures';
import { provenance, commitState } from '../lib/provenance';
import { nameFlag, numberOption, reportSuffix } from '../lib/args';
import { saveReport, today } from '../lib/results';
import { fmt, median } from '../lib/stats';

interface Row {
  format: string;
  bytes: number;
  ms: number[];
  maxLoopDelayMs: number[];
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const rounds = numberOption(args, '--rounds', 5);
  const minutes = numberOption(args, '--minutes', 10);
  const suffix = reportSuffix(args);
  const prov = provenance();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'decoders-'));
  const long = path.join(dir, 'long.wav');
  const copies = Math.ceil((minutes * 60) / 11);
  execFileSync('sox', [...Array(copies).fill(path.join(AUDIO_DIR, 'jfk.wav')), long]);
  const seconds = copies * 11;
  const long44 = path.join(dir, 'long-44k.wav');
  execFileSync('sox', [long, '-r', '44100', '-c', '2', '-b', '16', long44]);
  // As phones and browsers record: 44.1 kHz stereo (so every format but Opus, decoded at 16 kHz, is resampled), and a 16-kHz WAV.
  const cd = { rate: 44100, channels: 2 };
  const files: Record<string, Buffer> = {
    'WAV, 16 kHz mono': readFileSync(long),
    'WAV, 44.1 kHz stereo': readFileSync(long44),
    'MP3, 44.1 kHz stereo, 64 kbit/s': encodedAudio(long, 'mp3', cd),
    'FLAC, 44.1 kHz stereo': encodedAudio(long, 'flac', cd),
    'Ogg Opus, 44.1 kHz stereo in (opusenc default)': encodedAudio(long, 'opus', cd),
    'Ogg Vorbis, 44.1 kHz stereo': encodedAudio(long, 'ogg', cd),
  };
  // WebM/Opus is not timed apart: its frames go through the same libopus decoder as Ogg's.
  const rows: Row[] = Object.entries(files).map(([format, bytes]) => ({ format, bytes: bytes.length, ms: [], maxLoopDelayMs: [] }));
  for (let round = 0; round < rounds; round++) {
    for (const row of rows) {
      const loop = monitorEventLoopDelay({ resolution: 1 });
      loop.enable();
      const started = performance.now();
      const got = await decodeAudio(files[row.format], seconds + 60);
      row.ms.push(performance.now() - started);
      loop.disable();
      row.maxLoopDelayMs.push(loop.max / 1e6);
      if (Math.abs(got.durationSeconds - seconds) > 0.5) throw new Error(`${row.format}: decoded ${got.durationSeconds} s of ${seconds}`);
    }
  }
  const lines = [
    `# Decoders, ${today()}`,
    '',
    `\`npx tsx benchmarks/studies/decoders.ts --rounds ${rounds} --minutes ${minutes}${nameFlag(suffix)}\` at commit ${commitState(prov)}, ${prov.cpu}, ${prov.cores} cores, Node ${prov.node}.`,
    `jfk.wav repeated to ${seconds} s, one decode at a time, ${rounds} rounds in turn.`,
    '',
    '| format | file, MB | decode, ms: median (range) | × real time | longest event-loop stall, ms: median (max) |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r.format} | ${fmt(r.bytes / 1e6, 1)} | ${fmt(median(r.ms), 0)} (${fmt(Math.min(...r.ms), 0)}-${fmt(Math.max(...r.ms), 0)}) | ${fmt((seconds * 1000) / median(r.ms), 0)} | ${fmt(median(r.maxLoopDelayMs), 1)} (${fmt(Math.max(...r.maxLoopDelayMs), 1)}) |`),
    '',
  ];
  saveReport(`decoders-${today()}${suffix}`, lines.join('\n'), { provenance: prov, seconds, rounds, rows });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
