// Model names a client may send: OpenAI's out of the box (STT_OPENAI_MODEL_NAMES),
// so an app written for OpenAI works unchanged; and aliases the host adds
// (routing). These tests turn OpenAI's names off to see the host's alone,
// except the first.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import OpenAI, { toFile } from 'openai';
import { startTestServer, transcribe, wavBlob, type TestServer } from '../helpers/server';
import { AUDIO_DIR, FAKE_OPENAI_KEY as PROVIDER_KEY, startOpenAiLike, type FakeServer } from '../../fixtures';

const JFK = readFileSync(path.join(AUDIO_DIR, 'jfk.wav'));
let server: TestServer;
let provider: FakeServer;

before(async () => {
  provider = await startOpenAiLike(PROVIDER_KEY);
  server = await startTestServer({ routing: { mode: 'local', localModel: 'whisper-base' }, env: HOST_ALIASES_ONLY });
});
const HOST_ALIASES_ONLY = { STT_OPENAI_MODEL_NAMES: '' };
after(async () => {
  await server.close();
  await provider.close();
});

async function putRouting(body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}/admin/routing`, {
    method: 'PUT',
    headers: { Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

const listed = async () => (await (await fetch(`${server.url}/v1/models`, { headers: server.auth })).json()).data.map((m: { id: string }) => m.id);

test('out of the box OpenAI\'s model names are answered and listed: the official client with whisper-1 works unchanged', async () => {
  // Unset, as on a fresh install (the helper turns OpenAI's names off for the other tests).
  const fresh = await startTestServer({ routing: { mode: 'local', localModel: 'whisper-base' }, env: { STT_OPENAI_MODEL_NAMES: undefined as unknown as string } });
  try {
    const names = (await (await fetch(`${fresh.url}/v1/models`, { headers: fresh.auth })).json()).data.map((m: { id: string }) => m.id);
    assert.deepEqual(names, ['service-local-stt', 'whisper-1', 'gpt-4o-transcribe', 'gpt-4o-mini-transcribe', 'gpt-transcribe']);
    const client = new OpenAI({ apiKey: fresh.apiKey, baseURL: `${fresh.url}/v1` });
    for (const model of ['whisper-1', 'gpt-4o-mini-transcribe']) {
      const r = await client.audio.transcriptions.create({ file: await toFile(JFK, 'jfk.wav'), model });
      assert.ok(r.text.length > 0, model);
    }
    assert.equal((await client.models.retrieve('whisper-1')).id, 'whisper-1');
    await assert.rejects(client.audio.transcriptions.create({ file: await toFile(JFK, 'jfk.wav'), model: 'gpt-4o-transcribe-diarize' }),
      (e: { status?: number }) => e.status === 400, 'diarization is not one of the names');
  } finally {
    await fresh.close();
  }
});

test('with OpenAI\'s names off and no host aliases: another model name is a 400 and /v1/models lists the public model alone', async () => {
  assert.deepEqual((await (await fetch(`${server.url}/admin/routing`, { headers: { Authorization: `Bearer ${server.adminKey}` } })).json()).aliases, []);
  const res = await transcribe(server, { file: wavBlob(JFK), model: 'whisper-1' }, server.auth);
  assert.equal(res.status, 400);
  assert.equal((await res.json()).error.code, 'model_not_found');
  assert.deepEqual(await listed(), ['service-local-stt']);
});

test('aliases set by the host are accepted, listed and retrievable, by the official client too', async () => {
  const set = await putRouting({ aliases: ['whisper-1', 'gpt-4o-transcribe'] });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  assert.deepEqual(set.body.aliases, ['whisper-1', 'gpt-4o-transcribe']);
  assert.equal(set.body.localModel, 'whisper-base', 'the rest of routing is kept');
  assert.deepEqual(await listed(), ['service-local-stt', 'whisper-1', 'gpt-4o-transcribe']);

  const direct = await transcribe(server, { file: wavBlob(JFK), model: 'gpt-4o-transcribe' }, server.auth);
  assert.equal(direct.status, 200);
  const client = new OpenAI({ apiKey: server.apiKey, baseURL: `${server.url}/v1` });
  const viaAlias = await client.audio.transcriptions.create({ file: await toFile(JFK, 'jfk.wav'), model: 'whisper-1' });
  const viaPublic = await client.audio.transcriptions.create({ file: await toFile(JFK, 'jfk.wav'), model: 'service-local-stt' });
  assert.equal(viaAlias.text, viaPublic.text, 'an alias names the same runtime');
  assert.equal((await client.models.retrieve('whisper-1')).id, 'whisper-1');
  await assert.rejects(client.models.retrieve('whisper-2'), (e: { status?: number }) => e.status === 404);
  await assert.rejects(
    client.audio.transcriptions.create({ file: await toFile(JFK, 'jfk.wav'), model: 'whisper-2' }),
    (e: { status?: number }) => e.status === 400,
  );
});

test('bad alias lists are refused whole, naming the entry, and routing stays as it was', async () => {
  const before = await putRouting({ aliases: ['whisper-1'] });
  const refused: [unknown, string][] = [
    [['ok-name', 'service-local-stt'], 'aliases.1'],
    [['whisper-1', 'whisper-1'], 'aliases.1'],
    [['has space'], 'aliases.0'],
    [[''], 'aliases.0'],
    [['x'.repeat(101)], 'aliases.0'],
    [Array.from({ length: 21 }, (_, i) => `m${i}`), 'aliases'],
    ['whisper-1', 'aliases'],
  ];
  for (const [aliases, param] of refused) {
    const r = await putRouting({ aliases });
    assert.equal(r.status, 400, JSON.stringify(aliases));
    assert.equal(r.body.error.param, param, JSON.stringify(aliases));
  }
  const after = await (await fetch(`${server.url}/admin/routing`, { headers: { Authorization: `Bearer ${server.adminKey}` } })).json();
  assert.deepEqual(after, before.body);
  assert.deepEqual((await putRouting({ aliases: [] })).body.aliases, [], 'an empty list clears them');
  assert.deepEqual(await listed(), ['service-local-stt']);
});

test('in Cloud mode an alias reaches the provider as the routed model, not as the name the client sent', async () => {
  const admin = { Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' };
  const created = await fetch(`${server.url}/admin/providers/fake`, {
    method: 'PUT', headers: admin,
    body: JSON.stringify({ kind: 'openai', baseUrl: provider.url, apiKey: PROVIDER_KEY, enabled: true, models: [{ id: 'whisper-large-v3' }] }),
  });
  assert.equal(created.status, 201);
  const routed = await putRouting({ mode: 'cloud', cloud: { providerId: 'fake', model: 'whisper-large-v3' }, aliases: ['whisper-1'] });
  assert.equal(routed.status, 200, JSON.stringify(routed.body));
  try {
    assert.deepEqual(await listed(), ['fake/whisper-large-v3', 'whisper-1']);
    const res = await transcribe(server, { file: wavBlob(JFK), model: 'whisper-1' }, server.auth);
    assert.equal(res.status, 200);
    assert.equal(provider.requests.at(-1)!.fields.model, 'whisper-large-v3');
    const local = await transcribe(server, { file: wavBlob(JFK), model: 'service-local-stt' }, server.auth);
    assert.equal(local.status, 400, 'the local name is not served while Cloud routes');
  } finally {
    await putRouting({ mode: 'local', aliases: [] });
  }
});

test('aliases survive a restart', async () => {
  await putRouting({ aliases: ['whisper-1'] });
  const dataDir = server.dataDir;
  await server.close();
  server = await startTestServer({ dataDir, env: HOST_ALIASES_ONLY });
  assert.deepEqual(await listed(), ['service-local-stt', 'whisper-1']);
  assert.equal((await transcribe(server, { file: wavBlob(JFK), model: 'whisper-1' }, server.auth)).status, 200);
});
