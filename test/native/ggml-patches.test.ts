// The ggml patches that promise bit-identical results, checked below the
// model: test/native/q0_columns.cpp multiplies a q8_0 matrix by 2-7 columns
// at once and by each column alone, through the patched ggml the addon
// builds (built by `npm run build:peers` as stt-q0-columns).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { requireBin } from '../../fixtures/peers';

const run = promisify(execFile);

for (const threads of [1, 2, 3]) {
  test(`q0-one-pass: a q8_0 product of n columns equals n one-column products, bit for bit (${threads} threads)`, async () => {
    const { stdout } = await run(requireBin('stt-q0-columns'), [String(threads)]).catch((error: { stdout?: string; message: string }) => {
      assert.fail(`stt-q0-columns failed: ${error.stdout ?? error.message}`);
    });
    assert.match(stdout, /q0 columns: all equal/);
  });
}
