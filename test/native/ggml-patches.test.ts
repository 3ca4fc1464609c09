// Two of the ggml patches that promise bit-identical results, checked below
// the model (shared-q0-tiles is checked on the real model), through the patched ggml the addon builds (`npm run build:peers`
// builds the checks): test/native/q0_columns.cpp multiplies a q8_0 matrix by
// 2-7 columns at once and by each column alone (stt-q0-columns);
// test/native/fa_tiles.cpp runs the encoder's flash attention on the same
// queries at two places in their tiles, and against a double-precision
// attention (stt-fa-tiles).
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

for (const threads of [1, 2, 3]) {
  test(`fa-wide-tiles: each query row of the tiled flash attention is the same wherever it sits in its tile, and right (${threads} threads)`, async () => {
    const { stdout } = await run(requireBin('stt-fa-tiles'), [String(threads)]).catch((error: { stdout?: string; message: string }) => {
      assert.fail(`stt-fa-tiles failed: ${error.stdout ?? error.message}`);
    });
    assert.match(stdout, /fa tiles: all equal/);
  });
}
