// whisper.cpp's own whisper-cli on one clip with the decoding the server uses
// in the eval and parity tests: greedy, English, no temperature fallback, 2 threads.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const BIN_DIR = path.resolve(__dirname, '..', '..', 'build', 'bin');
/** Token ids at or above this are special (end of text, timestamps, ...). */
export const WHISPER_EOT = 50257;

export interface CliResult {
  text: string;
  tokens: number[];
  /** whisper-cli's own total minus its model load, in ms. */
  inferenceMs: number;
}

/** `extraArgs` go after the defaults (a later flag wins in whisper-cli), e.g. ['--prompt', text]. */
export async function whisperCli(model: string, wav: string, threads = 2, extraArgs: string[] = []): Promise<CliResult> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'stt-cli-'));
  try {
    const out = path.join(dir, 'out');
    const { stderr } = await run(path.join(BIN_DIR, 'whisper-cli'),
      ['-m', model, '-f', wav, '-t', String(threads), '-l', 'en', '-bs', '1', '-nf', '-ng', '-ojf', '-of', out, ...extraArgs], { maxBuffer: 1 << 26 });
    const json = JSON.parse(readFileSync(`${out}.json`, 'utf8'));
    const segs = json.transcription as { text: string; tokens: { id: number }[] }[];
    const ms = (label: string) => Number(new RegExp(`${label} =\\s*([\\d.]+) ms`).exec(stderr)?.[1] ?? NaN);
    return {
      text: segs.map((s) => s.text).join(''),
      tokens: segs.flatMap((s) => s.tokens.map((t) => t.id).filter((id) => id < WHISPER_EOT)),
      inferenceMs: ms('total time') - ms('load time'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
