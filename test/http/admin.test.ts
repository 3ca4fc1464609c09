// The admin API: auth, validation, atomic changes, providers against loopback
// servers speaking their wire formats, model downloads, persistence.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync, existsSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { startTestServer, transcribe, wavBlob, tempDataDir, type TestServer } from '../helpers/server';
import { FAKE_OPENAI_KEY as OPENAI_KEY, FAKE_DEEPGRAM_KEY as DEEPGRAM_KEY, startOpenAiLike, startDeepgramLike, startModelServer, refusedUrl, type FakeServer, type ModelServer, AUDIO_DIR, microModel, PARAKEET_FIXTURE } from '../../fixtures';

const JFK = readFileSync(path.join(AUDIO_DIR, 'jfk.wav'));
let server: TestServer;
let openai: FakeServer;
let deepgram: FakeServer;
let models: ModelServer;
const dataDir = tempDataDir();

before(async () => {
  openai = await startOpenAiLike(OPENAI_KEY);
  deepgram = await startDeepgramLike(DEEPGRAM_KEY);
  models = await startModelServer();
  server = await start();
});
after(async () => {
  await server.close();
  await Promise.all([openai.close(), deepgram.close(), models.close()]);
});

function start(): Promise<TestServer> {
  return startTestServer({
    dataDir,
    routing: { mode: 'local', localModel: 'whisper-base' },
    env: { STT_MODEL_BASE_URL: models.url, STT_PROVIDER_TIMEOUT_BASE_MS: '1000', STT_PROVIDER_TIMEOUT_PER_AUDIO_SECOND_MS: '0' },
  });
}

async function admin(method: string, p: string, body?: unknown, key = server.adminKey): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${p}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

function expectError(r: { status: number; body: any }, status: number, code: string, param?: string | null): void {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.error.code, code);
  if (param !== undefined) assert.equal(r.body.error.param, param);
}

test('admin auth: missing, wrong, and external keys get 401 on every route', async () => {
  const routes: [string, string][] = [['GET', '/admin/status'], ['GET', '/admin/providers'], ['PUT', '/admin/providers/x'], ['GET', '/admin/routing'],
    ['PUT', '/admin/routing'], ['GET', '/admin/api-keys'], ['POST', '/admin/api-keys'], ['POST', '/admin/api-keys/x/revoke'],
    ['GET', '/admin/local-models'], ['POST', '/admin/local-models/whisper-base/download'], ['DELETE', '/admin/local-models/whisper-base']];
  for (const [method, p] of routes) {
    expectError(await admin(method, p, undefined, 'wrong-admin-key-000000000'), 401, 'invalid_api_key');
    expectError(await admin(method, p, undefined, server.apiKey), 401, 'invalid_api_key');
    const none = await fetch(`${server.url}${p}`, { method });
    assert.equal(none.status, 401, `${method} ${p}`);
  }
});

test('GET /admin/status has the contract shape', async () => {
  const { status, body } = await admin('GET', '/admin/status');
  assert.equal(status, 200);
  assert.equal(body.serviceId, server.services.serviceId);
  assert.match(body.version, /^\d+\.\d+\.\d+$/);
  assert.equal(typeof body.uptimeSeconds, 'number');
  assert.equal(body.mode, 'local');
  assert.equal(body.publicModel, 'service-local-stt');
  assert.deepEqual(body.local, { activeModel: 'whisper-base', state: 'ready', error: null, crashedLoad: null });
  assert.deepEqual(Object.keys(body.queue).sort(), ['capacity', 'running', 'waiting']);
  assert.equal(body.system.threads, 2);
  assert.ok(body.system.rssBytes > 0);
});

test('API keys: create (shown once), list, revoke (idempotent), validation', async () => {
  const created = await admin('POST', '/admin/api-keys', { name: 'mobile app' });
  assert.equal(created.status, 201);
  assert.deepEqual(Object.keys(created.body).sort(), ['audioSecondsPerDay', 'createdAt', 'id', 'key', 'localOnly', 'name', 'prefix', 'requestsPerMinute']);
  assert.ok(created.body.key.startsWith(created.body.prefix));
  const listed = await admin('GET', '/admin/api-keys');
  const mine = listed.body.data.find((k: { id: string }) => k.id === created.body.id);
  assert.deepEqual(Object.keys(mine).sort(), ['audioSecondsPerDay', 'createdAt', 'id', 'lastUsedAt', 'localOnly', 'name', 'prefix', 'requestsPerMinute', 'revokedAt', 'usage']);
  assert.ok(!JSON.stringify(listed.body).includes(created.body.key), 'the key is never listed');
  assert.equal((await transcribe(server, { file: wavBlob(JFK) }, { Authorization: `Bearer ${created.body.key}` })).status, 200);
  const revoked = await admin('POST', `/admin/api-keys/${created.body.id}/revoke`);
  assert.equal(revoked.status, 200);
  assert.ok(revoked.body.revokedAt);
  assert.equal((await admin('POST', `/admin/api-keys/${created.body.id}/revoke`)).body.revokedAt, revoked.body.revokedAt);
  assert.equal((await transcribe(server, { file: wavBlob(JFK) }, { Authorization: `Bearer ${created.body.key}` })).status, 401);
  expectError(await admin('POST', '/admin/api-keys/no-such-id/revoke'), 404, 'unknown_api_key', 'id');
  expectError(await admin('POST', '/admin/api-keys', {}), 400, 'invalid_value', 'name');
  expectError(await admin('POST', '/admin/api-keys', { name: 42 }), 400, 'invalid_value', 'name');
  expectError(await admin('POST', '/admin/api-keys', { name: 'x', scope: 'all' }), 400, 'unknown_parameter', 'scope');
  expectError(await admin('POST', '/admin/api-keys', { name: '   ' }), 400, 'invalid_value', 'name');
  expectError(await admin('POST', '/admin/api-keys', { name: 'x'.repeat(101) }), 400, 'invalid_value', 'name');
  expectError(await admin('POST', '/admin/api-keys', '{"name": '), 400, 'invalid_json');
});

/**
 * A key as a store that encodes instead of encrypting would hold it: as is, hex, and base64 or
 * base64url, the latter at each of the three byte alignments it could have inside a longer value
 * (only the characters that depend on the key's bytes alone).
 */
function encodings(key: string): string[] {
  const bytes = Buffer.from(key);
  const forms = [key, bytes.toString('hex'), bytes.toString('hex').toUpperCase()];
  for (const shift of [0, 1, 2]) {
    const b64 = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64').slice(shift ? 4 : 0, -4);
    forms.push(b64, b64.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return forms;
}

test('providers: built-ins, create/update, keys write-only and encrypted at rest', async () => {
  const list = await admin('GET', '/admin/providers');
  assert.deepEqual(list.body.data.map((p: { id: string }) => p.id).sort(), ['deepgram', 'groq', 'openai']);
  for (const p of list.body.data) assert.equal(p.enabled || p.apiKeySet, false);

  expectError(await admin('PUT', '/admin/providers/local-ai', { baseUrl: openai.url }), 400, 'missing_field', 'kind');
  expectError(await admin('PUT', '/admin/providers/local-ai', { kind: 'openai' }), 400, 'missing_field', 'baseUrl');
  expectError(await admin('PUT', '/admin/providers/local-ai', { kind: 'azure', baseUrl: openai.url }), 400, 'invalid_value', 'kind');
  expectError(await admin('PUT', '/admin/providers/local-ai', { kind: 'openai', baseUrl: 'file:///etc/passwd' }), 400, 'invalid_value', 'baseUrl');
  expectError(await admin('PUT', '/admin/providers/local-ai', { kind: 'openai', baseUrl: openai.url, colour: 'red' }), 400, 'unknown_parameter', 'colour');
  expectError(await admin('PUT', '/admin/providers/Bad%20Id', { kind: 'openai', baseUrl: openai.url }), 400, 'invalid_value', 'id');
  // Model names go out in a response header: a space, a line break or a non-ASCII letter is refused here, not a 500 on every answer.
  for (const [models, param] of [[[{ id: 'whisper 1' }], 'models.0.id'], [[{ id: 'w1', alias: 'house\nstt' }], 'models.0.alias'], [[{ id: 'w1' }, { id: '模型' }], 'models.1.id']] as const) {
    expectError(await admin('PUT', '/admin/providers/local-ai', { kind: 'openai', baseUrl: openai.url, models }), 400, 'invalid_value', param);
  }
  assert.equal((await admin('GET', '/admin/providers')).body.data.length, 3, 'nothing half-created');

  const created = await admin('PUT', '/admin/providers/local-ai', {
    name: 'Loopback OpenAI', kind: 'openai', baseUrl: openai.url, apiKey: OPENAI_KEY, enabled: true,
    models: [{ id: 'whisper-1' }, { id: 'big-model', alias: 'house-stt' }],
  });
  assert.equal(created.status, 201);
  assert.equal(created.body.apiKeySet, true);
  assert.equal(created.body.apiKeyHint, '…3456');
  assert.ok(!JSON.stringify(created.body).includes(OPENAI_KEY));
  const updated = await admin('PUT', '/admin/providers/deepgram', { baseUrl: deepgram.url, apiKey: DEEPGRAM_KEY, enabled: true });
  assert.equal(updated.status, 200);
  assert.equal(updated.body.kind, 'deepgram');
  assert.ok(!JSON.stringify((await admin('GET', '/admin/providers')).body).includes(DEEPGRAM_KEY));

  const db = readFileSync(path.join(dataDir, 'stt-gateway.sqlite'));
  const wal = existsSync(path.join(dataDir, 'stt-gateway.sqlite-wal')) ? readFileSync(path.join(dataDir, 'stt-gateway.sqlite-wal')) : Buffer.alloc(0);
  for (const key of [OPENAI_KEY, DEEPGRAM_KEY]) {
    for (const form of encodings(key)) assert.ok(!db.includes(form) && !wal.includes(form), `a key is stored in clear or merely encoded (${form})`);
  }
  assert.equal(statSync(path.join(dataDir, 'secret.key')).mode & 0o777, 0o600);
});

test('routing: validation, atomicity, cloud end to end, provider failures, back to local', async () => {
  const routingBefore = (await admin('GET', '/admin/routing')).body;
  assert.deepEqual(routingBefore, { mode: 'local', localModel: 'whisper-base', cloud: null, aliases: [], spillover: null, publicModel: 'service-local-stt' });
  expectError(await admin('PUT', '/admin/routing', { localModel: 'whisper-huge' }), 400, 'unknown_runtime', 'localModel');
  expectError(await admin('PUT', '/admin/routing', { mode: 'cloud' }), 400, 'missing_cloud_target', 'cloud');
  expectError(await admin('PUT', '/admin/routing', { mode: 'cloud', cloud: { providerId: 'nope', model: 'x' } }), 400, 'unknown_provider', 'cloud.providerId');
  expectError(await admin('PUT', '/admin/routing', { mode: 'cloud', cloud: { providerId: 'openai', model: 'whisper-1' } }), 400, 'provider_disabled', 'cloud.providerId');
  await admin('PUT', '/admin/providers/groq', { enabled: true });
  expectError(await admin('PUT', '/admin/routing', { mode: 'cloud', cloud: { providerId: 'groq', model: 'whisper-large-v3' } }), 400, 'provider_key_missing', 'cloud.providerId');
  expectError(await admin('PUT', '/admin/routing', { mode: 'cloud', cloud: { providerId: 'local-ai', model: 'gpt-9' } }), 400, 'unknown_model', 'cloud.model');
  expectError(await admin('PUT', '/admin/routing', { mode: 'sideways' }), 400, 'invalid_value', 'mode');
  expectError(await admin('PUT', '/admin/routing', { mode: 'cloud', cloud: { providerId: 'local-ai', model: 'whisper-1' }, localModel: 'nope' }), 400, 'unknown_runtime', 'localModel');
  // A file of the other family under a runtime's name: refused before anything is stored (the CLI's rule too).
  const parakeetFile = path.join(server.dataDir, 'models', 'parakeet-tdt-0.6b-v3-f16.bin');
  rmSync(parakeetFile);
  symlinkSync(await microModel(), parakeetFile);
  try {
    const r = await admin('PUT', '/admin/routing', { localModel: 'parakeet-tdt-0.6b-v3' });
    expectError(r, 409, 'runtime_file_mismatch', 'localModel');
    assert.match(r.body.error.message, /parakeet-tdt-0\.6b-v3-f16\.bin holds a whisper model; parakeet-tdt-0\.6b-v3 needs parakeet/);
  } finally {
    rmSync(parakeetFile);
    symlinkSync(PARAKEET_FIXTURE, parakeetFile);
  }
  assert.deepEqual((await admin('GET', '/admin/routing')).body, routingBefore, 'failed changes leave routing untouched');

  // Local works.
  const local = await transcribe(server, { file: wavBlob(JFK) }, server.auth);
  assert.equal(local.status, 200);

  // Switch to Cloud.
  const switched = await admin('PUT', '/admin/routing', { mode: 'cloud', cloud: { providerId: 'local-ai', model: 'whisper-1' } });
  assert.equal(switched.status, 200);
  assert.equal(switched.body.publicModel, 'local-ai/whisper-1');
  assert.equal((await (await fetch(`${server.url}/health`)).json()).publicModel, 'local-ai/whisper-1');
  assert.deepEqual((await (await fetch(`${server.url}/v1/models`, { headers: server.auth })).json()).data.map((m: { id: string }) => m.id), ['local-ai/whisper-1']);
  const cloud = await transcribe(server, { file: wavBlob(JFK), model: 'local-ai/whisper-1', language: 'en', prompt: 'JFK' }, server.auth);
  assert.deepEqual(await cloud.json(), { text: 'cloud transcript from whisper-1', usage: { type: 'duration', seconds: 11 } });
  const seen = openai.requests.at(-1)!;
  assert.equal(seen.auth, `Bearer ${OPENAI_KEY}`);
  assert.deepEqual({ model: seen.fields.model, language: seen.fields.language, prompt: seen.fields.prompt, response_format: seen.fields.response_format },
    { model: 'whisper-1', language: 'en', prompt: 'JFK', response_format: 'json' });
  // As measured: RIFF, fmt and every sample, jfk.wav's LIST chunk left out (forwarded-audio.ts).
  const samples = JFK.readUInt32LE(JFK.indexOf('data') + 4);
  assert.ok(seen.fileStartsWithRiff && seen.fileBytes === 44 + samples, `the WAV's samples reached the provider intact (${seen.fileBytes} bytes)`);
  const verbose = await (await transcribe(server, { file: wavBlob(JFK), response_format: 'verbose_json', 'timestamp_granularities[]': ['segment', 'word'] }, server.auth)).json();
  assert.equal(verbose.segments.length, 2);
  assert.equal(verbose.words.length, 3);
  assert.equal(openai.requests.at(-1)!.fields.response_format, 'verbose_json');
  assert.equal((await transcribe(server, { file: wavBlob(JFK), model: 'service-local-stt' }, server.auth)).status, 400);

  // An alias named by the provider record.
  await admin('PUT', '/admin/routing', { cloud: { providerId: 'local-ai', model: 'big-model' } });
  assert.equal((await (await fetch(`${server.url}/health`)).json()).publicModel, 'house-stt');
  await admin('PUT', '/admin/routing', { cloud: { providerId: 'local-ai', model: 'whisper-1' } });

  // Provider failures: 5xx (retried once), 401, malformed JSON, timeout.
  openai.failNext = 1;
  const before = openai.requests.length;
  assert.equal((await transcribe(server, { file: wavBlob(JFK) }, server.auth)).status, 200, 'one retry on a 5xx');
  assert.equal(openai.requests.length - before, 2);
  for (const [behaviour, needle] of [['server_error', '500'], ['unauthorized', 'credentials'], ['malformed', 'cannot use'], ['slow', 'in time'], ['bad_request', '400']] as const) {
    openai.behaviour = behaviour;
    const res = await transcribe(server, { file: wavBlob(JFK) }, server.auth);
    const body = await res.json();
    assert.equal(res.status, 502, behaviour);
    assert.equal(body.error.code, 'provider_error');
    assert.equal(body.error.type, 'upstream_error');
    assert.ok(body.error.message.includes(needle), `${behaviour}: ${body.error.message}`);
    assert.ok(!body.error.message.includes(OPENAI_KEY));
  }
  openai.behaviour = 'unauthorized';
  await transcribe(server, { file: wavBlob(JFK) }, server.auth);
  const status = await admin('GET', '/admin/status');
  assert.equal(status.body.providers.find((p: { id: string }) => p.id === 'local-ai').lastError.status, 401, 'auth failures are visible');
  openai.behaviour = 'ok';

  // Connection refused: retried once, then 502.
  const dead = await refusedUrl();
  await admin('PUT', '/admin/providers/gone', { kind: 'openai', baseUrl: dead, apiKey: 'k-123456789', enabled: true, models: [{ id: 'm' }] });
  await admin('PUT', '/admin/routing', { cloud: { providerId: 'gone', model: 'm' } });
  const refused = await transcribe(server, { file: wavBlob(JFK) }, server.auth);
  assert.equal(refused.status, 502);
  const refusedBody = await refused.json();
  assert.match(refusedBody.error.message, /could not be reached/);
  // No connection detail reaches a client or the status page (a port-scan oracle); it is in the log.
  assert.doesNotMatch(JSON.stringify(refusedBody), /ECONN|127\.0\.0\.1|:\d{2,5}/);
  const gone = (await admin('GET', '/admin/status')).body.providers.find((p: { id: string }) => p.id === 'gone');
  assert.equal(gone.lastError.message, 'connection failed');

  // A provider in use cannot be disabled.
  expectError(await admin('PUT', '/admin/providers/gone', { enabled: false }), 409, 'provider_in_use', 'enabled');

  // Deepgram: raw body, Token auth, query parameters; prompt is refused.
  await admin('PUT', '/admin/routing', { cloud: { providerId: 'deepgram', model: 'nova-3' } });
  const dg = await transcribe(server, { file: wavBlob(JFK), language: 'en', response_format: 'verbose_json', 'timestamp_granularities[]': 'word' }, server.auth);
  const dgBody = await dg.json();
  assert.equal(dg.status, 200, JSON.stringify(dgBody));
  assert.equal(dgBody.text, 'Hello Deepgram.');
  assert.deepEqual(dgBody.words, [{ word: 'Hello', start: 0.5, end: 0.9 }, { word: 'Deepgram.', start: 1, end: 1.6 }]);
  const dgSeen = deepgram.requests.at(-1)!;
  assert.equal(dgSeen.auth, `Token ${DEEPGRAM_KEY}`);
  assert.equal(dgSeen.contentType, 'audio/wav');
  assert.equal(dgSeen.query.model, 'nova-3');
  assert.equal(dgSeen.query.language, 'en');
  assert.ok(dgSeen.fileStartsWithRiff);
  const dgPrompt = await transcribe(server, { file: wavBlob(JFK), prompt: 'hint' }, server.auth);
  assert.equal(dgPrompt.status, 400);
  assert.equal((await dgPrompt.json()).error.param, 'prompt');
  deepgram.behaviour = 'bad_request';
  assert.equal((await transcribe(server, { file: wavBlob(JFK) }, server.auth)).status, 502);
  deepgram.behaviour = 'malformed';
  assert.equal((await transcribe(server, { file: wavBlob(JFK) }, server.auth)).status, 502);
  deepgram.behaviour = 'ok';

  // Back to Local.
  const back = await admin('PUT', '/admin/routing', { mode: 'local' });
  assert.equal(back.body.publicModel, 'service-local-stt');
  assert.equal((await transcribe(server, { file: wavBlob(JFK), model: 'service-local-stt' }, server.auth)).status, 200);

  // Revoke the key that did all this: its next request is refused.
  const mine = (await admin('GET', '/admin/api-keys')).body.data.find((k: { prefix: string }) => server.apiKey.startsWith(k.prefix));
  assert.equal((await admin('POST', `/admin/api-keys/${mine.id}/revoke`)).status, 200);
  assert.equal((await transcribe(server, { file: wavBlob(JFK) }, server.auth)).status, 401);
});

test('local models: list, download with progress, checksum mismatch, interruption and resume, conflicts, delete', async () => {
  const model = readFileSync(await microModel());
  const list = (await admin('GET', '/admin/local-models')).body.data;
  assert.deepEqual(list.map((m: { id: string }) => m.id), ['whisper-base', 'whisper-small', 'parakeet-tdt-0.6b-v3']);
  assert.equal(list[0].active, true);

  // A fresh data dir without models for the download tests; Parakeet's files (no pinned sha256) allowed.
  const dlServer = await startTestServer({ installModels: false, env: { STT_MODEL_BASE_URL: models.url, STT_ALLOW_UNPINNED_MODELS: 'true' } });
  const dl = (method: string, p: string, body?: unknown) =>
    fetch(`${dlServer.url}${p}`, { method, headers: { Authorization: `Bearer ${dlServer.adminKey}`, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const entry = async (id: string) => ((await (await dl('GET', '/admin/local-models')).json()).data as any[]).find((m) => m.id === id);
  const settle = async (id: string) => {
    for (let i = 0; i < 1000; i++) {
      const e = await entry(id);
      if (e.download && (e.download.state === 'done' || e.download.state === 'failed')) return e;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.fail('download did not settle');
  };
  try {
    expectError({ status: 404, body: await (await dl('POST', '/admin/local-models/whisper-huge/download')).json() }, 404, 'unknown_runtime', 'id');
    expectError({ status: 400, body: await (await dl('POST', '/admin/local-models/whisper-small/download', { variant: '../../etc/passwd' })).json() }, 400, 'unknown_variant', 'variant');

    // Wrong size: ggml-base.bin's pinned size is the real file's, so the size check refuses it
    // before any checksum is computed.
    models.files.set('ggml-base.bin', model);
    assert.equal((await dl('POST', '/admin/local-models/whisper-base/download', { variant: 'ggml-base.bin' })).status, 202);
    let e = await settle('whisper-base');
    assert.equal(e.download.state, 'failed');
    assert.match(e.download.error, new RegExp(`^size mismatch: got ${model.length} bytes, expected 147951465$`));
    assert.equal(e.installed, false);
    assert.deepEqual(readdirSync(path.join(dlServer.dataDir, 'models')), [], 'nothing partial is left behind');

    // Right size, wrong bytes: ggml-small.bin has a pinned sha256 and no pinned size, so the
    // whole file arrives (progress visible meanwhile, a second request gets 409) and the
    // checksum refuses it.
    models.files.set('ggml-small.bin', model);
    models.throttle = { chunk: 256 * 1024, delayMs: 20 };
    assert.equal((await dl('POST', '/admin/local-models/whisper-small/download', { variant: 'ggml-small.bin' })).status, 202);
    expectError({ status: 409, body: await (await dl('POST', '/admin/local-models/whisper-small/download')).json() }, 409, 'download_in_progress', 'id');
    expectError({ status: 409, body: await (await dl('DELETE', '/admin/local-models/whisper-small')).json() }, 409, 'download_in_progress', 'id');
    let sawProgress = false;
    for (let i = 0; i < 1000 && !sawProgress; i++) {
      const d = (await entry('whisper-small')).download;
      sawProgress = d.state === 'downloading' && d.receivedBytes > 0 && d.receivedBytes < model.length && d.totalBytes === model.length;
      if (d.state !== 'downloading') break;
    }
    assert.ok(sawProgress, 'partial progress was visible');
    e = await settle('whisper-small');
    assert.equal(e.download.state, 'failed');
    assert.equal(e.download.error, `sha256 mismatch: got ${createHash('sha256').update(model).digest('hex')}, expected 1be3a9b2063867b937e64e2ec7483364a79917e157fa98c5d94b5c1fffea987b`);
    assert.equal(e.download.checksumVerified, false);
    assert.equal(e.installed, false);
    assert.deepEqual(readdirSync(path.join(dlServer.dataDir, 'models')), [], 'nothing partial is left behind');
    models.throttle = null;

    // Right size and right bytes for a pinned file: installed and verified. (The catalogue's
    // real pins cannot be matched by generated bytes, so this test pins the file it serves.)
    models.files.set('ggml-small-q8_0.bin', model);
    dlServer.services.downloader.published.set('ggml-small-q8_0.bin', { bytes: model.length, sha256: createHash('sha256').update(model).digest('hex') });
    assert.equal((await dl('POST', '/admin/local-models/whisper-small/download')).status, 202);
    e = await settle('whisper-small');
    assert.equal(e.download.state, 'done', e.download.error);
    assert.equal(e.download.checksumVerified, true);
    assert.equal(e.installed, true);
    assert.equal(e.file, 'ggml-small-q8_0.bin');

    // Interrupted: not installed, partial kept; the next request resumes with a Range request.
    models.files.set('parakeet-tdt-0.6b-v3-q8_0.bin', readFileSync(PARAKEET_FIXTURE));
    const pk = models.files.get('parakeet-tdt-0.6b-v3-q8_0.bin')!;
    models.cutAfterBytes = 5000;
    await dl('POST', '/admin/local-models/parakeet-tdt-0.6b-v3/download');
    e = await settle('parakeet-tdt-0.6b-v3');
    assert.equal(e.download.state, 'failed');
    assert.equal(e.installed, false);
    await dl('POST', '/admin/local-models/parakeet-tdt-0.6b-v3/download');
    e = await settle('parakeet-tdt-0.6b-v3');
    assert.equal(e.download.state, 'done', e.download.error);
    assert.equal(e.installed, true);
    assert.equal(e.bytes, pk.length);
    assert.equal(e.download.checksumVerified, false, 'no published checksum: recorded, not verified');
    assert.equal(e.download.sha256, createHash('sha256').update(pk).digest('hex'));
    assert.ok(models.rangeRequests.some((r) => /^bytes=\d+-$/.test(r) && r !== 'bytes=0-'), 'resumed with Range');

    // Activate the downloaded runtime, then it cannot be deleted; another can.
    assert.equal((await dl('PUT', '/admin/routing', { localModel: 'whisper-base' })).status, 409);
    const act = await dl('PUT', '/admin/routing', { localModel: 'parakeet-tdt-0.6b-v3' });
    assert.equal(act.status, 200);
    expectError({ status: 409, body: await (await dl('DELETE', '/admin/local-models/parakeet-tdt-0.6b-v3')).json() }, 409, 'runtime_active', 'id');
    assert.equal((await dl('DELETE', '/admin/local-models/whisper-small')).status, 204);
    assert.equal((await entry('whisper-small')).installed, false);
  } finally {
    await dlServer.close();
  }
});

test('changes survive a restart', async () => {
  await admin('PUT', '/admin/routing', { mode: 'cloud', cloud: { providerId: 'local-ai', model: 'whisper-1' } });
  const keys = (await admin('GET', '/admin/api-keys')).body;
  await server.close();
  server = await startTestServer({ dataDir, createKey: false, env: { STT_MODEL_BASE_URL: models.url } });
  assert.equal((await admin('GET', '/admin/routing')).body.publicModel, 'local-ai/whisper-1');
  assert.deepEqual((await admin('GET', '/admin/api-keys')).body, keys);
  const p = (await admin('GET', '/admin/providers')).body.data.find((x: { id: string }) => x.id === 'local-ai');
  assert.equal(p.apiKeySet, true);
  await admin('PUT', '/admin/routing', { mode: 'local' });
});
