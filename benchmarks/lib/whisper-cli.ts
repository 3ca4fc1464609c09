// whisper.cpp's own CLI from build/bin (the same whisper.cpp and ggml, patches
// included, as the addon) run on one clip with the real base q8_0, and the
// per-stage timings it prints (whisper_print_timings). The studies read our
// engine's stages from it.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { BIN_DIR, realModelPath } from '../../fixtures';

const run = promisify(execFile);
/** A 30-s window decodes in seconds; a run past this is stuck, not slow. */
const RUN_TIMEOUT_MS = 300_000;

/** Greedy with one candidate (as the server decodes at temperature 0), or beam search. */
export const cliDecodingFlags = (beam: number): string[] => (beam === 1 ? ['-bs', '1', '-bo', '1'] : ['-bs', String(beam)]);

/** whisper_print_timings lines: stage → ms. */
export function cliStages(stderr: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of stderr.matchAll(/whisper_print_timings:\s+(\w+) time =\s+([\d.]+) ms(?: \/\s+(\d+) runs)?/g)) out[m[1]] = Number(m[2]);
  return out;
}

/** The same lines' run counts: stage → runs (decode: the one-token steps; batchd: the batched ones). */
export function cliRuns(stderr: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of stderr.matchAll(/whisper_print_timings:\s+(\w+) time =\s+[\d.]+ ms \/\s+(\d+) runs/g)) out[m[1]] = Number(m[2]);
  return out;
}

export interface CliRun {
  /** Log-mel features, encoder, decoder passes (one-token, batched and prompt), sampling: ms. */
  features: number;
  encode: number;
  decode: number;
  sample: number;
  /** whisper.cpp's own total, and the process as this side timed it. */
  total: number;
  wall: number;
  /** Decoder passes: one-token steps and batched ones. */
  decoderRuns: number;
}

/** The four stages' sum: what the studies set against faster-whisper's features, encode() and generate(). */
export const stagesSum = (r: CliRun): number => r.features + r.encode + r.decode + r.sample;

/** One whisper-cli run on `file` in the full window, timestamps on (as the server decodes), no temperature fallback. */
export async function cliRun(file: string, opts: { threads: number; language: string; beam: number }): Promise<CliRun> {
  const args = ['-m', realModelPath('base-q8_0'), '-f', file, '-t', String(opts.threads), '-l', opts.language, '-nf', ...cliDecodingFlags(opts.beam)];
  const t0 = performance.now();
  const { stderr } = await run(path.join(BIN_DIR, 'whisper-cli'), args, { maxBuffer: 1 << 24, timeout: RUN_TIMEOUT_MS, killSignal: 'SIGKILL' });
  const wall = performance.now() - t0;
  const s = cliStages(stderr);
  if (s.encode === undefined || s.decode === undefined) throw new Error(`whisper-cli printed no stage timings:\n${stderr.slice(-2000)}`);
  const runs = cliRuns(stderr);
  return {
    features: s.mel ?? 0, encode: s.encode, decode: s.decode + (s.batchd ?? 0) + (s.prompt ?? 0), sample: s.sample ?? 0,
    total: s.total ?? NaN, wall, decoderRuns: (runs.decode ?? 0) + (runs.batchd ?? 0),
  };
}
