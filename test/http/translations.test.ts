// POST /v1/audio/translations (issue 15 item 2) on generated models: the
// route, its field set, the runtimes and providers that cannot translate, and
// the provider's own translations endpoint. Real speech in German is
// translated by real weights in test/real/translations.test.ts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import OpenAI, { toFile } from 'openai';
import { startTestServer, wavBlob, type TestServer } from '../helpers/server';
import { AUDIO_DIR, FAKE_DEEPGRAM_KEY as DEEPGRAM_KEY, FAKE_OPENAI_KEY as OPENAI_KEY, startDeepgramLike, startOpenAiLike, type FakeServer } from '../../fixtures';

const JFK = readFileSync(path.join(AUDIO_DIR, 'jfk.wav'));
let server: TestServer;
let openai: FakeServer;
let deepgram: FakeServer;

before(async () => {
  [openai, deepgram] = await Promise.all([startOpenAiLike(OPENAI_KEY), startDeepgramLike(DEEPGRAM_KEY)]);
  server = await startTestServer({ routing: { mode: 'local', localModel: 'whisper-base' } });
});
after(async () => {
  await server.close();
  await Promise.all([openai.close(), deepgram.close()]);
});

function translate(fields: Record<string, string | Blob>): Promise<Response> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) {
    if (v instanceof Blob) form.append(k, v, 'audio.wav');
    else form.append(k, v);
  }
  return fetch(`${server.url}/v1/audio/translations`, { method: 'POST', body: form, headers: server.auth });
}

async function admin(method: string, p: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${p}`, {
    method, headers: { Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

async function expectError(res: Response, status: number, code: string, param: string | null): Promise<string> {
  const body = await res.json();
  assert.equal(res.status, status, JSON.stringify(body));
  assert.deepEqual([body.error.code, body.error.param], [code, param]);
  return body.error.message;
}

test('a Whisper runtime translates in every response format; verbose_json says translate and English', async () => {
  const json = await translate({ file: wavBlob(JFK), model: 'service-local-stt' });
  assert.equal(json.status, 200);
  const body = await json.json();
  assert.equal(typeof body.text, 'string');
  assert.deepEqual(body.usage, { type: 'duration', seconds: 11 });
  const verbose = await (await translate({ file: wavBlob(JFK), response_format: 'verbose_json' })).json();
  assert.deepEqual([verbose.task, verbose.language, verbose.duration, verbose.text], ['translate', 'english', 11, body.text]);
  assert.ok(Array.isArray(verbose.segments) && verbose.segments.length > 0);
  assert.equal(verbose.words, undefined, 'OpenAI\'s translations have no words');
  assert.equal(await (await translate({ file: wavBlob(JFK), response_format: 'text' })).text(), `${body.text}\n`);
  assert.match(await (await translate({ file: wavBlob(JFK), response_format: 'srt' })).text(), /^1\n\d\d:\d\d:\d\d,\d{3} --> /);
  assert.match(await (await translate({ file: wavBlob(JFK), response_format: 'vtt' })).text(), /^WEBVTT\n\n\d\d:\d\d:\d\d\.\d{3} --> /);
  // The official client's translations API.
  const client = new OpenAI({ apiKey: server.apiKey, baseURL: `${server.url}/v1` });
  const viaClient = await client.audio.translations.create({ file: await toFile(JFK, 'jfk.wav'), model: 'service-local-stt' });
  assert.equal(viaClient.text, body.text);
});

test('fields a translation does not take are refused by name; a bad model and format as for transcriptions', async () => {
  await expectError(await translate({ file: wavBlob(JFK), language: 'de' }), 400, 'unknown_parameter', 'language');
  await expectError(await translate({ file: wavBlob(JFK), 'timestamp_granularities[]': 'word' }), 400, 'unknown_parameter', 'timestamp_granularities[]');
  await expectError(await translate({ file: wavBlob(JFK), chunking_strategy: 'auto' }), 400, 'unknown_parameter', 'chunking_strategy');
  await expectError(await translate({ file: wavBlob(JFK), model: 'whisper-9' }), 400, 'model_not_found', 'model');
  await expectError(await translate({ file: wavBlob(JFK), response_format: 'xml' }), 400, 'invalid_response_format', 'response_format');
  await expectError(await translate({}), 400, 'missing_file', 'file');
  await expectError(await translate({ file: wavBlob(Buffer.from('not a wav')) }), 400, 'invalid_audio', 'file');
});

test('Parakeet cannot translate: 400 naming the runtime; it still transcribes', async () => {
  assert.equal((await admin('PUT', '/admin/routing', { localModel: 'parakeet-tdt-0.6b-v3' })).status, 200);
  try {
    await server.services.local.ready();
    const message = await expectError(await translate({ file: wavBlob(JFK) }), 400, 'translation_unsupported', 'model');
    assert.match(message, /parakeet-tdt-0\.6b-v3 cannot translate/);
    const form = new FormData();
    form.append('file', wavBlob(JFK), 'a.wav');
    assert.equal((await fetch(`${server.url}/v1/audio/transcriptions`, { method: 'POST', body: form, headers: server.auth })).status, 200);
  } finally {
    await admin('PUT', '/admin/routing', { localModel: 'whisper-base' });
    await server.services.local.ready();
  }
});

test('cloud: an OpenAI-kind provider is called on its translations endpoint with only the fields it takes; Deepgram cannot translate', async () => {
  assert.equal((await admin('PUT', '/admin/providers/oa', { kind: 'openai', baseUrl: openai.url, apiKey: OPENAI_KEY, enabled: true, models: [{ id: 'whisper-1' }] })).status, 201);
  assert.equal((await admin('PUT', '/admin/providers/dg', { kind: 'deepgram', baseUrl: deepgram.url, apiKey: DEEPGRAM_KEY, enabled: true, models: [{ id: 'nova-3' }] })).status, 201);
  try {
    assert.equal((await admin('PUT', '/admin/routing', { mode: 'cloud', cloud: { providerId: 'oa', model: 'whisper-1' } })).status, 200);
    const res = await translate({ file: wavBlob(JFK), model: 'oa/whisper-1', prompt: 'Kennedy', temperature: '0.1', response_format: 'verbose_json' });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.deepEqual([body.task, body.language, body.text], ['translate', 'english', 'cloud translation from whisper-1']);
    const call = openai.requests.at(-1)!;
    assert.equal(call.path, '/v1/audio/translations');
    assert.deepEqual(Object.keys(call.fields).sort(), ['model', 'prompt', 'response_format', 'temperature']);
    assert.equal(call.fileStartsWithRiff, true);

    assert.equal((await admin('PUT', '/admin/routing', { mode: 'cloud', cloud: { providerId: 'dg', model: 'nova-3' } })).status, 200);
    const calls = deepgram.requests.length;
    const message = await expectError(await translate({ file: wavBlob(JFK), model: 'dg/nova-3' }), 400, 'translation_unsupported', 'model');
    assert.match(message, /"dg" cannot translate/);
    assert.equal(deepgram.requests.length, calls, 'nothing was sent to Deepgram');
  } finally {
    await admin('PUT', '/admin/routing', { mode: 'local' });
  }
});
