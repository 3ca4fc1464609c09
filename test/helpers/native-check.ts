// Runs one of the native check binaries `npm run build:peers` builds
// (test/native/*.cpp): the checks of our whisper.cpp and ggml patches.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { requireBin } from '../../fixtures/peers';

const run = promisify(execFile);

/** A check's output; the check failing (a non-zero exit) fails the test with what it printed. */
export async function runCheck(bin: string, args: string[]): Promise<string> {
  const { stdout } = await run(requireBin(bin), args).catch((error: { stdout?: string; message: string }) => {
    assert.fail(`${bin} failed:\n${error.stdout ?? error.message}`);
  });
  return stdout;
}
