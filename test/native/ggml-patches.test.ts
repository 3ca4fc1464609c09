// Eleven of our whisper.cpp and ggml patches checked below the model (shared-q0-tiles is
// checked on the real model), through the patched ggml the addon builds
// (`npm run build:peers` builds the checks): test/native/q0_columns.cpp
// multiplies a q8_0 matrix by 2-7 columns at once and by each column alone
// (stt-q0-columns); test/native/fa_tiles.cpp runs the encoder's flash
// attention on the same queries at two places in their tiles, and against a
// double-precision attention (stt-fa-tiles, which checks fa-tile-loops too);
// test/native/fa_rows.cpp runs the decoder's few-row flash attention against
// a double-precision attention and with other rows beside each row
// (stt-fa-rows); test/native/gelu_table.cpp runs GELU on the same values by
// vectors and one at a time (stt-gelu-table); test/native/dft_twiddles.cpp
// runs whisper.cpp's patched 25-point DFT against a copy of the upstream one
// (stt-dft-twiddles); test/native/fa_tile_gemm.cpp runs the tiled attention's
// products through the patch and through ggml's simd_gemm (stt-fa-tile-gemm);
// test/native/lazy_probs.cpp runs the patch's greedy choice and
// probabilities against a copy of upstream's code (stt-lazy-probs; whole runs
// were compared by hand: benchmarks/results/barrier-ab-2026-11-27-tile-gemm-lazy-probs.md);
// test/native/fa_tile_loops.cpp runs fa-tile-loops' row maximum and key
// packing against ggml's loops (stt-fa-tile-loops);
// test/native/q0_offset_dot.cpp runs the q8_0 tiles' dot product against
// upstream's on every pair of byte values (stt-q0-offset-dot);
// test/native/q0_row_panels.cpp runs q8_0 products of 16-23 columns (8- or 16-row panels) against
// a scalar copy of their arithmetic and exact arithmetic (stt-q0-row-panels);
// test/native/f16c_conversions.cpp runs the patched ops' f32 to f16
// conversions against ggml's software one (stt-f16c-conversions).
// q0-one-pass, fa-wide-tiles, fa-tile-loops, fa-tile-gemm, gelu-vector-table,
// dft-twiddles, lazy-probs, q0-offset-dot and f16c-conversions promise bit-identical results
// (f16c-conversions: for every value but a NaN's payload);
// fa-rows and q0-row-panels promise f32 accuracy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { runCheck } from '../helpers/native-check';

for (const threads of [1, 2, 3]) {
  test(`q0-one-pass: a q8_0 product of n columns equals n one-column products, bit for bit (${threads} threads)`, async () => {
    const stdout = await runCheck('stt-q0-columns', [String(threads)]);
    assert.match(stdout, /q0 columns: all equal/);
  });
}

for (const threads of [1, 2, 3]) {
  test(`fa-wide-tiles: each query row of the tiled flash attention is the same wherever it sits in its tile, and right (${threads} threads)`, async () => {
    const stdout = await runCheck('stt-fa-tiles', [String(threads)]);
    assert.match(stdout, /fa tiles: all equal/);
  });
}

for (const threads of [1, 2, 3]) {
  test(`fa-rows: the decoder's few-row flash attention is within 1e-5 of a double-precision attention, and a row's result does not depend on the rows beside it nor on the tensors' layout (${threads} threads)`, async (t) => {
    const stdout = await runCheck('stt-fa-rows', [String(threads)]);
    // The patch is AVX-512 and AVX2 code: a build for another CPU runs ggml's own path, and says so.
    const flags = process.platform === 'linux' ? /^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1].split(' ') ?? [] : null;
    const hasPath = flags && (flags.includes('avx512f') || (flags.includes('avx2') && flags.includes('fma') && flags.includes('f16c')));
    if (/fa rows: skipped/.test(stdout)) {
      assert.ok(!hasPath, `this CPU has the path's instructions, yet the check skipped: ${stdout}`);
      return t.skip(stdout.trim());
    }
    assert.match(stdout, /fa rows: all equal/);
    if (flags) assert.match(stdout, new RegExp(`fa rows: the ${flags.includes('avx512f') && flags.includes('avx512dq') ? 'AVX-512' : 'AVX2'} path`));
  });
}

for (const threads of [1, 2]) {
  test(`gelu-vector-table: GELU by vectors (16 values on AVX-512, 8 on AVX2) gives the bits of ggml's one-at-a-time table lookup, for every f16 value and the edges (${threads} threads)`, async () => {
    const stdout = await runCheck('stt-gelu-table', [String(threads)]);
    assert.match(stdout, /gelu table: all equal/);
  });
}

for (const threads of [1, 3]) {
  test(`f16c-conversions: every f32 to f16 conversion of the patched ops (ggml_cpy by rows, transposed and into a view; im2col) gives the bits of ggml's software conversion, ties and edges included (${threads} threads)`, async () => {
    const stdout = await runCheck('stt-f16c-conversions', [String(threads)]);
    assert.match(stdout, /f16c conversions: all equal/);
    // The checks are built for this CPU: with F16C here, the patched conversions are the ones compared.
    const flags = process.platform === 'linux' ? /^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1].split(' ') ?? [] : [];
    if (flags.includes('f16c')) assert.match(stdout, /F16C compiled in/);
  });
}

test("fa-tile-gemm: the tiled flash attention's products with B held in registers give the bits of ggml's simd_gemm", async (t) => {
  const stdout = await runCheck('stt-fa-tile-gemm', []);
  // The patch is AVX-512 code: a build for another CPU runs ggml's own simd_gemm.
  if (/fa tile gemm: skipped/.test(stdout)) return t.skip(stdout.trim());
  assert.match(stdout, /fa tile gemm: all equal/);
});

test("fa-tile-loops: the tiled attention's row maximum and key packing give the bits of ggml's loops, on the vector path this CPU's build takes", async () => {
  const stdout = await runCheck('stt-fa-tile-loops', []);
  assert.match(stdout, /fa tile loops: all equal/);
  // The path the check took must be the one this CPU allows: build:peers builds ggml-cpu for it (-march=native).
  if (process.platform !== 'linux') return;
  const flags = /^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1].split(' ') ?? [];
  const expected = flags.includes('avx512f') ? 'AVX-512' : flags.includes('avx2') && flags.includes('f16c') ? 'AVX2' : 'no vector';
  assert.match(stdout, new RegExp(`fa tile loops: (the )?${expected} path`));
});

test('lazy-probs: at temperature 0 the greedy choice and the probabilities the samplers read are the bits of upstream whisper.cpp\'s, computed for every token', async () => {
  const stdout = await runCheck('stt-lazy-probs', []);
  assert.match(stdout, /lazy probs: all equal/);
});

test("q0-offset-dot: the q8_0 tiles' dot products with a's sign bit flipped give the bits of upstream's sign trick, for every pair of byte values q8_0 holds", async () => {
  const stdout = await runCheck('stt-q0-offset-dot', []);
  assert.match(stdout, /q0 offset dot: all equal/);
});

test("dft-twiddles: whisper.cpp's 25-point DFT, four outputs at a time, gives the bits of the upstream dft()", async () => {
  const stdout = await runCheck('stt-dft-twiddles', []);
  assert.match(stdout, /dft twiddles: all equal/);
});

for (const threads of [1, 2]) {
  test(`q0-row-panels: q8_0 products of 16 columns or more are the panels' arithmetic bit for bit, within f32 roundings of exact arithmetic, and the same bits at any column and thread count, on the path this CPU's build takes (${threads} threads)`, async () => {
    const stdout = await runCheck('stt-q0-row-panels', [String(threads)]);
    assert.match(stdout, /q0 row panels: all hold/);
    // The library says which panels it built: 8 rows on AVX2 with F16C and FMA, without AVX-512 or
    // VNNI; 16 rows on AVX-512 with VNNI (build:peers builds ggml-cpu for this CPU, -march=native).
    if (process.platform !== 'linux') return;
    const flags = /^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1].split(' ') ?? [];
    const has = (flag: string) => flags.includes(flag);
    const avx2 = has('avx2') && has('f16c') && has('fma');
    const height = avx2 && !has('avx512f') && !has('avx_vnni') ? 8 : avx2 && has('avx512f') && has('avx512_vnni') ? 16 : 0;
    assert.match(stdout, height ? new RegExp(`q0 row panels: the panel path, ${height} rows`) : /q0 row panels: no panel path/);
  });
}
