// The server at its production defaults (temperature fallback on, no token
// cap), end to end: every other test turns the fallback off and caps tokens to
// bound what random weights decode. Whisper with the real base weights;
// Parakeet with the generated fixture (greedy, no fallback of its own: only
// the cap differs). Each is made to pause a long job for a short one and to
// abort a job whose client left.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { startTestServer, tempDataDir, transcribe, wavBlob, type TestServer } from '../helpers/server';
import { realModelPath, PARAKEET_FIXTURE, AUDIO_DIR, longClip } from '../../fixtures';
import { normalizeEnglish, wer } from '../../scripts/lib/english-normalizer';

const JFK = readFileSync(path.join(AUDIO_DIR, 'jfk.wav'));
const JFK_TEXT = 'And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.';
/** Unset: the defaults apply. */
const PRODUCTION = { STT_MAX_TOKENS: undefined, STT_TEMPERATURE_FALLBACK: undefined, STT_BEAM_SIZE: undefined, STT_OPENAI_MODEL_NAMES: undefined };

async function startWith(runtime: 'whisper-base' | 'parakeet-tdt-0.6b-v3', file: string): Promise<TestServer & { logs: Record<string, unknown>[] }> {
  const dataDir = tempDataDir();
  mkdirSync(path.join(dataDir, 'models'));
  symlinkSync(file, path.join(dataDir, 'models', runtime === 'whisper-base' ? 'ggml-base.bin' : 'parakeet-tdt-0.6b-v3-f16.bin'));
  const logs: Record<string, unknown>[] = [];
  return { ...(await startTestServer({ dataDir, installModels: false, routing: { mode: 'local', localModel: runtime }, env: PRODUCTION, logs })), logs };
}

const running = (server: TestServer) => server.services.local.scheduler.stats().running;

async function untilRunning(server: TestServer, n: number): Promise<void> {
  for (let i = 0; i < 1000 && running(server) < n; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(running(server), n, 'the long job started');
}

/** A long job is running; a short one arrives and must be answered first (the long one paused for it). */
async function shortOvertakesLong(server: TestServer, long: Buffer): Promise<{ longText: string; shortText: string }> {
  const order: string[] = [];
  const longReq = transcribe(server, { file: wavBlob(long) }, server.auth).then(async (r) => (order.push('long'), r));
  await untilRunning(server, 1);
  const shortRes = await transcribe(server, { file: wavBlob(JFK) }, server.auth);
  order.push('short');
  const longRes = await longReq;
  assert.equal(shortRes.status, 200);
  assert.equal(longRes.status, 200);
  assert.deepEqual(order, ['short', 'long'], 'the short clip was answered while the long one was paused');
  return { shortText: (await shortRes.json()).text, longText: (await longRes.json()).text };
}

/**
 * A client leaves while its long job runs: the job is aborted (its request ends
 * in 499 with no runtime or sttMs, which a job that ran to its end would log),
 * and the server serves on.
 */
async function abortFreesTheSlot(server: TestServer & { logs: Record<string, unknown>[] }, long: Buffer): Promise<void> {
  const leave = new AbortController();
  const req = transcribe(server, { file: wavBlob(long) }, server.auth, leave.signal).catch((e: Error) => e);
  await untilRunning(server, 1);
  const left = performance.now();
  leave.abort();
  assert.equal(((await req) as Error).name, 'AbortError');
  for (let i = 0; i < 1000 && running(server) > 0; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(running(server), 0, `the job was still running ${(performance.now() - left).toFixed(0)} ms after its client left`);
  const gone = () => server.logs.filter((l) => l.msg === 'request' && l.path === '/v1/audio/transcriptions' && l.status === 499);
  for (let i = 0; i < 1000 && gone().length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(gone().map((l) => ({ errorCode: l.errorCode, runtime: l.runtime, sttMs: l.sttMs })),
    [{ errorCode: 'client_closed_request', runtime: undefined, sttMs: undefined }], 'the job was aborted, not run to its end');
  assert.equal((await transcribe(server, { file: wavBlob(JFK) }, server.auth)).status, 200);
}

test('Whisper at production defaults (real base q8_0): correct text, a short clip overtakes a long one, a left client\'s job stops', { timeout: 300_000 }, async () => {
  const server = await startWith('whisper-base', realModelPath('base-q8_0'));
  try {
    assert.equal(server.services.config.temperatureFallback, true);
    assert.equal(server.services.config.maxTokens, 0);
    const long = longClip(45);
    const { shortText, longText } = await shortOvertakesLong(server, long.wav);
    assert.equal(normalizeEnglish(shortText), normalizeEnglish(JFK_TEXT), shortText);
    // The eval's ceiling (test/real/real-weights.test.ts): a paused and resumed job decodes as well as any.
    const measured = wer([{ reference: long.reference, hypothesis: longText }]);
    assert.ok(measured < 0.15, `WER ${(measured * 100).toFixed(1)} % on the paused 45-s clip: ${longText}`);
    await abortFreesTheSlot(server, long.wav);
  } finally {
    await server.close();
  }
});

test('Parakeet at production defaults (generated weights): a short clip overtakes a long one with its own result, a left client\'s job stops', { timeout: 300_000 }, async () => {
  const server = await startWith('parakeet-tdt-0.6b-v3', PARAKEET_FIXTURE);
  try {
    const alone = await (await transcribe(server, { file: wavBlob(JFK) }, server.auth)).json();
    // The fixture is tiny: 45 s take it under a second, 290 s about six, against the 11-s clip's fraction of one.
    const long = longClip(290);
    const { shortText } = await shortOvertakesLong(server, long.wav);
    assert.equal(shortText, alone.text, 'the clip that overtook gives what it gives alone');
    await abortFreesTheSlot(server, long.wav);
  } finally {
    await server.close();
  }
});
