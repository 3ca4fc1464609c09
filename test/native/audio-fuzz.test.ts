// The decoders that run in JavaScript (Ogg and WebM readers, libopus and
// libvorbis in WebAssembly), fuzzed: seeded mutations of real files (bytes
// flipped, cut, repeated, sizes and counts set to extremes). Every mutant
// must decode to finite samples within the limit or be refused with a
// WavError; nothing else may come out (no TypeError, no WebAssembly trap, no
// hang), and clean files decode the same afterwards. Bounded and seeded: the
// same mutants every run. The native decoders have their own fuzzer under
// ASan (scripts/fuzz-wav.sh).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WavError } from '../../src/native';
import { decodeAudio } from '../../src/audio/decode-audio';
import { AUDIO_DIR, encodedAudio, ROOT } from '../../fixtures';
import type { DecodeOutcome } from '../../fixtures/decode-child';

const MUTANTS_PER_SEED = Number(process.env.AUDIO_FUZZ_MUTANTS ?? 120);
const LIMIT = 30;

function seeds(): Record<string, Buffer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'audio-fuzz-'));
  const clip = path.join(dir, 'jfk-4s.wav');
  execFileSync('sox', [path.join(AUDIO_DIR, 'jfk.wav'), clip, 'trim', '0', '4']);
  return {
    'ogg/opus': encodedAudio(clip, 'opus'),
    'ogg/vorbis': encodedAudio(clip, 'ogg', { rate: 44100, channels: 2 }),
    'webm/opus': readFileSync(path.join(ROOT, 'fixtures', 'audio', 'chromium-mediarecorder-jfk-4s.webm')),
  };
}

/** xorshift32: the same sequence from the same seed. */
function random(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

function mutate(file: Buffer, rand: () => number): Buffer {
  const out = Buffer.from(file);
  const at = () => Math.floor(rand() * out.length);
  // Headers are where the lengths and counts live: aim half the mutations at the first 200 bytes.
  const near = () => (rand() < 0.5 ? Math.floor(rand() * Math.min(200, out.length)) : at());
  switch (Math.floor(rand() * 5)) {
    case 0: // flip bytes
      for (let n = 1 + Math.floor(rand() * 8); n > 0; n--) out[near()] = Math.floor(rand() * 256);
      return out;
    case 1: // extremes: 0x00 or 0xff runs (sizes, counts, granules)
      for (let n = 1 + Math.floor(rand() * 4), i = near(); n > 0; n--, i++) if (i < out.length) out[i] = rand() < 0.5 ? 0 : 0xff;
      return out;
    case 2: // cut
      return out.subarray(0, at());
    case 3: { // a stretch repeated
      const from = at();
      const piece = out.subarray(from, from + Math.floor(rand() * 4096));
      const to = at();
      return Buffer.concat([out.subarray(0, to), piece, piece, out.subarray(to)]);
    }
    default: { // a stretch removed
      const from = at();
      return Buffer.concat([out.subarray(0, from), out.subarray(from + Math.floor(rand() * 2048))]);
    }
  }
}

test(`${MUTANTS_PER_SEED} mutants of each Ogg and WebM seed: decoded within the limit or refused with a WavError, never anything else`, async () => {
  const files = seeds();
  const clean = new Map<string, Float32Array>();
  for (const [name, file] of Object.entries(files)) clean.set(name, (await decodeAudio(file, LIMIT)).pcm);
  let seed = 1;
  for (const [name, file] of Object.entries(files)) {
    const outcomes = new Map<string, number>();
    for (let i = 0; i < MUTANTS_PER_SEED; i++, seed++) {
      const mutant = mutate(file, random(seed));
      try {
        const got = await decodeAudio(mutant, LIMIT);
        assert.ok(got.pcm.length <= LIMIT * 16000, `${name} seed ${seed}: ${got.pcm.length} samples, over the limit`);
        for (const x of got.pcm) if (!Number.isFinite(x)) assert.fail(`${name} seed ${seed}: a sample that is not finite`);
        outcomes.set('decoded', (outcomes.get('decoded') ?? 0) + 1);
      } catch (err) {
        if (!(err instanceof WavError)) assert.fail(`${name} seed ${seed}: ${(err as Error).constructor.name}: ${(err as Error).message}`);
        outcomes.set(err.code, (outcomes.get(err.code) ?? 0) + 1);
      }
    }
    // Both outcomes happen, so the mutations reach past the header and into it.
    assert.ok((outcomes.get('decoded') ?? 0) > 0 && outcomes.size > 1, `${name}: ${JSON.stringify(Object.fromEntries(outcomes))}`);
  }
  // And nothing is left broken: the clean files decode to the same samples.
  for (const [name, file] of Object.entries(files)) assert.deepEqual((await decodeAudio(file, LIMIT)).pcm, clean.get(name), name);
});

/**
 * An Ogg Vorbis decompression bomb: the real headers of a 44.1-kHz stereo
 * file, then `pages` pages of 255 one-byte packets. Each such packet is
 * silence in the long-block mode, 1,024 samples a channel, so 537 bytes of
 * page make 261,120 samples; no page states a granule position, so nothing
 * says how long it is before it decodes.
 */
function vorbisBomb(pages: number): Buffer {
  const real = encodedAudio(path.join(AUDIO_DIR, 'jfk.wav'), 'ogg', { rate: 44100, channels: 2 });
  const parts: Buffer[] = [];
  let at = 0;
  let serial = 0;
  let sequence = 0;
  // The header pages: up to the first page with audio (a granule position past 0).
  while (at + 27 <= real.length && real.readBigInt64LE(at + 6) === 0n) {
    const segments = real[at + 26];
    const end = at + 27 + segments + real.subarray(at + 27, at + 27 + segments).reduce((a, b) => a + b, 0);
    serial = real.readUInt32LE(at + 14);
    sequence = real.readUInt32LE(at + 18);
    parts.push(real.subarray(at, end));
    at = end;
  }
  for (let p = 0; p < pages; p++) {
    const header = Buffer.alloc(27);
    header.write('OggS', 0, 'latin1');
    header[5] = p === pages - 1 ? 0x04 : 0;
    header.writeBigInt64LE(-1n, 6);
    header.writeUInt32LE(serial, 14);
    header.writeUInt32LE(sequence + 1 + p, 18);
    header[26] = 255;
    // Packet byte 0x02: an audio packet (bit 0 clear) in mode 1, the long block.
    parts.push(header, Buffer.alloc(255, 1), Buffer.alloc(255, 0x02));
  }
  return Buffer.concat(parts);
}

test('a Vorbis decompression bomb (1-byte packets, no stated length) is stopped at the limit in memory bounded by the limit, not by the packets in a slice', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vorbis-bomb-'));
  const file = path.join(dir, 'bomb.ogg');
  writeFileSync(file, vorbisBomb(400)); // 215 kB, 40 minutes of silence
  const run = (limit: number): DecodeOutcome =>
    JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'fixtures', 'decode-child.ts'), file, String(limit)], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 }));
  const stopped = run(60);
  assert.equal(stopped.code, 'audio_too_long');
  // Decoded 64 kB at a time (before), the first slice alone made 31M samples a channel: 637 MiB peak.
  // Page by page, the decode holds one page's output and the 60 s kept: about 200 MiB with Node and the addon.
  assert.ok(stopped.maxRssMiB < 400, `peak RSS ${stopped.maxRssMiB} MiB`);
  // Under a limit it holds, it decodes to its full length: the bomb is real audio, not refused for its shape.
  const whole = run(3600);
  assert.equal(whole.code, null);
  assert.ok(whole.durationSeconds! > 2300, `${whole.durationSeconds} s`);
});
