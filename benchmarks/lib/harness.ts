// Runs the bare C++ harness (build/bin/stt-harness) and returns its per-run times.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { existsSync } from 'node:fs';

const run = promisify(execFile);
export const BIN = path.resolve(__dirname, '..', '..', 'build', 'bin');

export function requireBin(name: string): string {
  const file = path.join(BIN, name);
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build:native\` (it builds the peers too)`);
  return file;
}

export interface HarnessRun {
  ms: number;
  tokens: number;
  /** whisper.cpp's own timings (Whisper only): per encoder run and per decoded token. */
  encodeMs?: number;
  decodeMsPerToken?: number;
}

export async function harness(family: 'whisper' | 'parakeet', model: string, wav: string, threads: number, runs: number, maxTokens = 0): Promise<{ loadMs: number; runs: HarnessRun[]; maxRssBytes: number }> {
  const { stdout } = await run(requireBin('stt-harness'), [family, model, wav, String(threads), String(runs), String(maxTokens)], { maxBuffer: 1 << 24 });
  const events = stdout.trim().split('\n').map((l) => JSON.parse(l));
  return {
    loadMs: events.find((e) => e.event === 'loaded').ms,
    runs: events.filter((e) => e.event === 'run').map((e) => ({ ms: e.ms, tokens: e.tokens, encodeMs: e.encodeMs, decodeMsPerToken: e.decodeMsPerToken })),
    maxRssBytes: (events.find((e) => e.event === 'done')?.maxRssKb ?? 0) * 1024,
  };
}
