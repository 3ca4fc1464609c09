// A new host's first start: the default runtime becomes active (at once when
// installed, after a background download otherwise) and a first API key is
// created; nothing a host set before is touched.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { startTestServer, tempDataDir, installStandInModels, type TestServer } from '../helpers/server';
import { startModelServer, PARAKEET_FIXTURE } from '../../fixtures';
import { openDatabase } from '../../src/store/open-database';
import { SettingsStore } from '../../src/store/settings';

const status = async (s: TestServer) =>
  (await (await fetch(`${s.url}/admin/status`, { headers: { Authorization: `Bearer ${s.adminKey}` } })).json()) as any;

async function until<T>(what: string, get: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  for (let i = 0; i < 1500; i++) {
    const v = await get();
    if (ok(v)) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`timed out waiting for ${what}`);
}

test('an installed default model is active at once, and a first API key works and is written 0600', async () => {
  const dataDir = tempDataDir();
  await installStandInModels(dataDir);
  const s = await startTestServer({ dataDir, createKey: false, env: { STT_DEFAULT_MODEL: 'whisper-base' } });
  try {
    assert.equal(s.firstStart.status?.state, 'activated');
    const st = await until('ready', () => status(s), (b) => b.local.state === 'ready');
    assert.equal(st.local.activeModel, 'whisper-base');
    assert.deepEqual(st.firstStart, { model: 'whisper-base', state: 'activated', error: null });
    const file = path.join(dataDir, 'first-api.key');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    // The database (job transcripts, callback URLs) and its WAL: the owner's alone too.
    for (const db of ['stt-gateway.sqlite', 'stt-gateway.sqlite-wal']) assert.equal(statSync(path.join(dataDir, db)).mode & 0o777, 0o600, db);
    const key = readFileSync(file, 'utf8').trim();
    assert.equal(key, s.firstStart.apiKey?.key);
    const models = await fetch(`${s.url}/v1/models`, { headers: { Authorization: `Bearer ${key}` } });
    assert.equal(models.status, 200);
    assert.deepEqual((await models.json()).data.map((m: { id: string }) => m.id), ['service-local-stt']);
  } finally {
    await s.close();
  }
  // A restart is not a first start: no second key, routing as it was.
  const again = await startTestServer({ dataDir, createKey: false, env: { STT_DEFAULT_MODEL: 'whisper-small' } });
  try {
    assert.equal(again.firstStart.apiKey, null);
    assert.equal(again.firstStart.status, null);
    assert.equal((await again.services.apiKeys.list()).length, 1);
    assert.equal((await again.services.settings.routing()).localModel, 'whisper-base');
  } finally {
    await again.close();
  }
});

test('a default model that is not installed is downloaded in the background, then activated', async () => {
  const models = await startModelServer();
  models.files.set('parakeet-tdt-0.6b-v3-q8_0.bin', readFileSync(PARAKEET_FIXTURE));
  models.throttle = { chunk: 4096, delayMs: 100 };
  const s = await startTestServer({ installModels: false, env: { STT_DEFAULT_MODEL: 'parakeet-tdt-0.6b-v3', STT_MODEL_BASE_URL: models.url, STT_ALLOW_UNPINNED_MODELS: 'true' } });
  try {
    assert.equal((await status(s)).firstStart.state, 'downloading', 'the server answers while it downloads');
    const st = await until('activation', () => status(s), (b) => b.local.state === 'ready');
    assert.equal(st.local.activeModel, 'parakeet-tdt-0.6b-v3');
    assert.equal(st.firstStart.state, 'activated');
  } finally {
    await s.close();
    await models.close();
  }
});

test('routing the host sets while the default model downloads is kept', async () => {
  const models = await startModelServer();
  models.files.set('parakeet-tdt-0.6b-v3-q8_0.bin', readFileSync(PARAKEET_FIXTURE));
  models.throttle = { chunk: 2048, delayMs: 100 };
  const s = await startTestServer({ installModels: false, env: { STT_DEFAULT_MODEL: 'parakeet-tdt-0.6b-v3', STT_MODEL_BASE_URL: models.url, STT_ALLOW_UNPINNED_MODELS: 'true' } });
  try {
    assert.equal((await status(s)).firstStart.state, 'downloading');
    await s.services.settings.setRouting({ mode: 'local', localModel: null, cloud: null }); // as the admin CLI writes it
    const st = await until('the download to end', () => status(s), (b) => b.firstStart.state !== 'downloading');
    assert.equal(st.firstStart.state, 'failed');
    assert.match(st.firstStart.error, /set by the host/);
    assert.deepEqual(await s.services.settings.routing(), { mode: 'local', localModel: null, cloud: null, aliases: [], spillover: null });
  } finally {
    await s.close();
    await models.close();
  }
});

test('a failed download leaves the server up and /admin/status says why', async () => {
  const models = await startModelServer(); // serves nothing: 404
  const s = await startTestServer({ installModels: false, env: { STT_DEFAULT_MODEL: 'whisper-base', STT_MODEL_BASE_URL: models.url } });
  try {
    const st = await until('failure', () => status(s), (b) => b.firstStart.state === 'failed');
    assert.match(st.firstStart.error, /HTTP 404/);
    assert.equal(st.local.activeModel, null);
    assert.equal((await fetch(`${s.url}/health`)).status, 200);
    assert.equal((await s.services.settings.hasRouting()), false, 'the next start tries again');
  } finally {
    await s.close();
    await models.close();
  }
});

test('a host who stored routing before is never overridden', async () => {
  const dataDir = tempDataDir();
  await installStandInModels(dataDir);
  const db = await openDatabase({ dataDir, databaseUrl: null });
  await new SettingsStore(db).setRouting({ mode: 'local', localModel: null, cloud: null });
  await db.close();
  const s = await startTestServer({ dataDir, createKey: false, env: { STT_DEFAULT_MODEL: 'whisper-base' } });
  try {
    assert.equal(s.firstStart.status, null);
    assert.equal(s.firstStart.apiKey, null);
    assert.equal((await status(s)).local.activeModel, null);
    assert.equal((await s.services.apiKeys.list()).length, 0);
  } finally {
    await s.close();
  }
});
