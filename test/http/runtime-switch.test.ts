// Changing the local runtime under load: a job that started on the old model
// finishes there and the old model is freed after it, not before; a request
// while nothing is loaded yet gets 503 model_loading; a load that fails shows
// its error while the model before it keeps serving, and the host recovers by
// choosing another runtime or fixing the file.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gateModelLoads, startTestServer, transcribe, wavBlob, type TestServer } from '../helpers/server';
import { AUDIO_DIR, speechClip } from '../../fixtures';
import { liveObjects } from '../../src/native';

const JFK = readFileSync(path.join(AUDIO_DIR, 'jfk.wav'));
let server: TestServer;

before(async () => {
  server = await startTestServer({ whisper: 'tiny-f16', routing: { mode: 'local', localModel: 'whisper-base' } });
});
after(() => server.close());

async function route(localModel: string | null): Promise<void> {
  const res = await fetch(`${server.url}/admin/routing`, {
    method: 'PUT',
    headers: { Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ mode: 'local', localModel }),
  });
  assert.equal(res.status, 200, await res.text());
}
const local = () => server.services.local.status();
async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), `${what}: ${JSON.stringify(local())}`);
}

test('a job running on the old model finishes there; the old model is freed after that job, not before', async () => {
  const engines = liveObjects().engines;
  // 120 s on tiny Whisper: several windows, far longer than loading the Parakeet fixture.
  const long = transcribe(server, { file: wavBlob(speechClip(120)), response_format: 'verbose_json' }, server.auth);
  await until('the long job started', () => server.services.local.scheduler.stats().running === 1);
  await route('parakeet-tdt-0.6b-v3');
  await until('Parakeet is ready', () => local().state === 'ready' && local().activeModel === 'parakeet-tdt-0.6b-v3');
  assert.equal(server.services.local.scheduler.stats().running, 1, 'the Whisper job is still running');
  assert.equal(liveObjects().engines, engines + 1, 'both models are loaded while the old one has a job');
  assert.equal((await transcribe(server, { file: wavBlob(JFK) }, server.auth)).status, 200, 'Parakeet serves new requests meanwhile');
  const res = await long;
  assert.equal(res.status, 200);
  assert.ok((await res.json()).segments.length > 0);
  await until('the old model was freed', () => liveObjects().engines === engines);
  await route('whisper-base');
  await until('Whisper is back', () => local().state === 'ready' && local().activeModel === 'whisper-base');
});

test('while nothing is loaded yet a request gets 503 model_loading with Retry-After, then succeeds', async () => {
  await route(null);
  await until('no runtime', () => local().state === 'none');
  // A gate in front of the real load, which the test opens once it has its answer: the request
  // surely comes while the model loads, however fast the load is.
  const loads = gateModelLoads(server);
  try {
    await route('whisper-small');
    await until('whisper-small loading', () => local().state === 'loading');
    // Bounded: a server that held the request until the load ended would wait for this gate forever.
    const res = await transcribe(server, { file: wavBlob(JFK) }, server.auth, AbortSignal.timeout(30_000));
    const body = await res.json();
    assert.equal(res.status, 503, JSON.stringify(body));
    assert.equal(body.error.code, 'model_loading');
    assert.ok(Number(res.headers.get('retry-after')) > 0);
  } finally {
    loads.restore();
  }
  await until('whisper-small ready', () => local().state === 'ready');
  assert.equal((await transcribe(server, { file: wavBlob(JFK) }, server.auth)).status, 200);
});

test('a runtime whose file fails to load shows the error; choosing another recovers, and so does fixing the file', async () => {
  await route('whisper-base'); // whisper-small must be a new choice, or activating it again changes nothing
  await until('whisper-base ready', () => local().state === 'ready' && local().activeModel === 'whisper-base');
  const models = path.join(server.dataDir, 'models');
  const small = path.join(models, 'ggml-small.bin');
  const good = readFileSync(small);
  rmSync(small);
  writeFileSync(small, good.subarray(0, good.length >> 1)); // truncated: the loader refuses it
  await route('whisper-small');
  await until('the load failed', () => local().state === 'error');
  assert.match(local().error!, /truncat|short|size|tensor/i);
  // The model that was serving keeps serving: the failed choice costs the host no availability.
  assert.equal((await transcribe(server, { file: wavBlob(JFK) }, server.auth)).status, 200);
  await route('whisper-base');
  await until('whisper-base ready', () => local().state === 'ready' && local().activeModel === 'whisper-base');
  assert.equal(local().error, null);
  assert.equal((await transcribe(server, { file: wavBlob(JFK) }, server.auth)).status, 200);
  rmSync(small);
  symlinkSync(path.resolve(models, 'ggml-base.bin'), small);
  await route('whisper-small');
  await until('whisper-small ready once its file is good', () => local().state === 'ready' && local().activeModel === 'whisper-small');
});
