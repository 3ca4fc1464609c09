// Cloud providers against their published examples (fixtures/providers),
// the provider behaviours the adapters promise, and provider keys at rest
// across restarts and secrets.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createCipheriv, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { startTestServer, transcribe, wavBlob, tempDataDir, type TestServer } from '../helpers/server';
import { startOpenAiLike, startDeepgramLike, publishedExample, type FakeServer, AUDIO_DIR, FAKE_OPENAI_KEY as OPENAI_KEY, FAKE_DEEPGRAM_KEY as DEEPGRAM_KEY } from '../../fixtures';
import { startChild } from '../helpers/child-server';
import { openDatabase } from '../../src/store/open-database';

const JFK = readFileSync(path.join(AUDIO_DIR, 'jfk.wav'));
let server: TestServer;
let openai: FakeServer;
let deepgram: FakeServer;
const logs: Record<string, unknown>[] = [];

before(async () => {
  openai = await startOpenAiLike(OPENAI_KEY);
  deepgram = await startDeepgramLike(DEEPGRAM_KEY);
  server = await startTestServer({ installModels: false, logs, env: { STT_PROVIDER_TIMEOUT_BASE_MS: '60000' } });
  await admin(server, 'PUT', '/admin/providers/oai', { kind: 'openai', baseUrl: openai.url, apiKey: OPENAI_KEY, enabled: true, models: [{ id: 'whisper-1' }] });
  await admin(server, 'PUT', '/admin/providers/deepgram', { baseUrl: deepgram.url, apiKey: DEEPGRAM_KEY, enabled: true });
});
after(async () => {
  await server.close();
  await Promise.all([openai.close(), deepgram.close()]);
});

async function admin(s: TestServer, method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${s.url}${p}`, {
    method,
    headers: { Authorization: `Bearer ${s.adminKey}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function routeTo(s: TestServer, providerId: string, model: string): Promise<void> {
  const r = await admin(s, 'PUT', '/admin/routing', { mode: 'cloud', cloud: { providerId, model } });
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

async function lastError(s: TestServer, providerId: string): Promise<any> {
  const status = await admin(s, 'GET', '/admin/status');
  return status.body.providers.find((p: { id: string }) => p.id === providerId).lastError;
}

/** Keys and value types, recursively; an array is the set of its items' shapes. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return [...new Set(v.map((item) => JSON.stringify(shape(item))))].sort().map((s) => JSON.parse(s));
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, shape((v as Record<string, unknown>)[k])]));
  }
  return v === null ? 'null' : typeof v;
}

// ---- 1. The fakes against the providers' published examples

test('the fake providers answer in the shape of the published examples, recursively', async () => {
  const form = (fields: Record<string, string | string[]>) => {
    const f = new FormData();
    f.append('file', wavBlob(JFK), 'audio.wav');
    for (const [k, v] of Object.entries(fields)) for (const item of [v].flat()) f.append(k, item);
    return f;
  };
  const askOpenAi = async (fields: Record<string, string | string[]>) =>
    (await fetch(`${openai.url}/audio/transcriptions`, { method: 'POST', headers: { Authorization: `Bearer ${OPENAI_KEY}` }, body: form(fields) })).json();

  assert.deepEqual(shape(await askOpenAi({ model: 'whisper-1', response_format: 'json' })), shape(publishedExample('openai-json.json')));
  assert.deepEqual(shape(await askOpenAi({ model: 'whisper-1', response_format: 'verbose_json', 'timestamp_granularities[]': 'segment' })),
    shape(publishedExample('openai-verbose-segments.json')));
  assert.deepEqual(shape(await askOpenAi({ model: 'whisper-1', response_format: 'verbose_json', 'timestamp_granularities[]': 'word' })),
    shape(publishedExample('openai-verbose-words.json')));
  // Both granularities: OpenAI sends both lists, each as in its own example.
  const both = await askOpenAi({ model: 'whisper-1', response_format: 'verbose_json', 'timestamp_granularities[]': ['segment', 'word'] });
  assert.deepEqual(shape(both), shape({ ...publishedExample('openai-verbose-segments.json'), words: publishedExample('openai-verbose-words.json').words }));

  const dg = await fetch(`${deepgram.url}/listen?model=nova-3&utterances=true`, {
    method: 'POST', headers: { Authorization: `Token ${DEEPGRAM_KEY}`, 'Content-Type': 'audio/wav' }, body: JFK as unknown as BodyInit,
  });
  assert.deepEqual(shape(await dg.json()), shape(publishedExample('deepgram-listen.json')));
});

test('each published example, answered as it is, reaches our client with its transcript, segments and words', async () => {
  try {
    await routeTo(server, 'oai', 'whisper-1');
    const json = publishedExample('openai-json.json');
    openai.reply = json;
    let res = await transcribe(server, { file: wavBlob(JFK) }, server.auth);
    assert.deepEqual(await res.json(), { text: json.text, usage: { type: 'duration', seconds: 11 } });

    const segmented = publishedExample('openai-verbose-segments.json');
    openai.reply = segmented;
    res = await transcribe(server, { file: wavBlob(JFK), response_format: 'verbose_json' }, server.auth);
    let body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.text, segmented.text);
    assert.equal(body.language, 'english');
    assert.equal(body.duration, 8.47);
    assert.deepEqual(body.segments.map((s: any) => [s.start, s.end, s.text, s.tokens, s.avg_logprob, s.no_speech_prob]),
      [[0, 3.32, ' The beach was a popular spot on a hot summer day.', segmented.segments[0].tokens, -0.2861, 0.0099]]);

    const worded = publishedExample('openai-verbose-words.json');
    openai.reply = worded;
    res = await transcribe(server, { file: wavBlob(JFK), response_format: 'verbose_json', 'timestamp_granularities[]': 'word' }, server.auth);
    body = await res.json();
    assert.equal(body.text, worded.text);
    assert.deepEqual(body.words, [{ word: 'The', start: 0, end: 0.24 }, { word: 'volleyball', start: 7.4, end: 7.9 }]);

    await routeTo(server, 'deepgram', 'nova-3');
    const listen = publishedExample('deepgram-listen.json');
    deepgram.reply = listen;
    res = await transcribe(server, { file: wavBlob(JFK), response_format: 'verbose_json', 'timestamp_granularities[]': ['segment', 'word'] }, server.auth);
    body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.text, 'This historic spacewalk marks a significant milestone for women in aerospace.');
    assert.equal(body.language, 'english', "Deepgram's detected_language");
    assert.equal(body.duration, 25.933);
    // Segments are Deepgram's utterances; their words keep Deepgram's times.
    assert.deepEqual(body.segments.map((s: any) => [s.start, s.end, s.text]), [[0, 25.9, ' This historic spacewalk marks a significant milestone for women in aerospace.']]);
    assert.deepEqual(body.words, [{ word: 'historic', start: 0.5, end: 1 }, { word: 'spacewalk', start: 4.8, end: 5.5 }]);
  } finally {
    openai.reply = deepgram.reply = undefined;
  }
});

// ---- 2. Provider behaviours

test('GET /v1/models/{id} in Cloud mode: the listed "provider/model" id is served with its slash sent raw or encoded', async () => {
  await routeTo(server, 'oai', 'whisper-1');
  const listed = (await (await fetch(`${server.url}/v1/models`, { headers: server.auth })).json()).data as { id: string }[];
  assert.ok(listed.length > 0 && listed.every((m) => m.id.includes('/')), JSON.stringify(listed));
  for (const m of listed) {
    for (const id of [m.id, encodeURIComponent(m.id)]) {
      const res = await fetch(`${server.url}/v1/models/${id}`, { headers: server.auth });
      assert.equal(res.status, 200, id);
      assert.deepEqual(await res.json(), m);
    }
  }
});

test('an answer over 16 MiB is refused (bad_response) and the next call works', async () => {
  await routeTo(server, 'oai', 'whisper-1');
  openai.reply = { text: 'x'.repeat(17 * 1024 * 1024) };
  try {
    const res = await transcribe(server, { file: wavBlob(JFK) }, server.auth);
    assert.equal(res.status, 502);
    assert.equal((await res.json()).error.code, 'provider_error');
    const failure = await lastError(server, 'oai');
    assert.deepEqual([failure.reason, failure.message], ['bad_response', 'answered with more than 16 MiB']);
  } finally {
    openai.reply = undefined;
  }
  assert.equal((await transcribe(server, { file: wavBlob(JFK) }, server.auth)).status, 200);
  assert.equal((await fetch(`${server.url}/health`)).status, 200);
});

test('an OpenAI-like 200 without "text" is a 502 the client can read, and the next call works', async () => {
  await routeTo(server, 'oai', 'whisper-1');
  const { text: _dropped, ...noText } = publishedExample('openai-verbose-segments.json');
  openai.reply = noText;
  try {
    const res = await transcribe(server, { file: wavBlob(JFK) }, server.auth);
    const body = await res.json();
    assert.equal(res.status, 502, JSON.stringify(body));
    assert.equal(body.error.code, 'provider_error');
    assert.equal(body.error.type, 'upstream_error');
    assert.match(body.error.message, /sent an answer this server cannot use/);
    assert.equal((await lastError(server, 'oai')).reason, 'bad_response');
  } finally {
    openai.reply = undefined;
  }
  const next = await transcribe(server, { file: wavBlob(JFK) }, server.auth);
  assert.deepEqual(await next.json(), { text: 'cloud transcript from whisper-1', usage: { type: 'duration', seconds: 11 } });
});

test('Deepgram: a 5xx is retried once (provider-fetch.ts), a second 5xx is the answer', async () => {
  await routeTo(server, 'deepgram', 'nova-3');
  deepgram.failNext = 1;
  let before = deepgram.requests.length;
  const retried = await transcribe(server, { file: wavBlob(JFK) }, server.auth);
  assert.deepEqual(await retried.json(), { text: 'Hello Deepgram.', usage: { type: 'duration', seconds: 11 } });
  assert.equal(deepgram.requests.length - before, 2, 'one retry');

  deepgram.failNext = 2;
  before = deepgram.requests.length;
  const failed = await transcribe(server, { file: wavBlob(JFK) }, server.auth);
  assert.equal(failed.status, 502);
  assert.match((await failed.json()).error.message, /HTTP 503/);
  assert.equal(deepgram.requests.length - before, 2, 'one retry, not more');
  assert.equal(deepgram.failNext, 0);
});

test('Deepgram without utterances: one segment over the whole duration, with the alternative\'s words', async () => {
  await routeTo(server, 'deepgram', 'nova-3');
  const { utterances: _none, ...results } = publishedExample('deepgram-listen.json').results;
  deepgram.reply = { ...publishedExample('deepgram-listen.json'), results };
  try {
    const res = await transcribe(server, { file: wavBlob(JFK), response_format: 'verbose_json', 'timestamp_granularities[]': ['segment', 'word'] }, server.auth);
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.text, 'This historic spacewalk marks a significant milestone for women in aerospace.');
    assert.deepEqual(body.segments.map((s: any) => [s.start, s.end, s.text]), [[0, 25.933, ' This historic spacewalk marks a significant milestone for women in aerospace.']]);
    assert.deepEqual(body.words, [{ word: 'historic', start: 0.5, end: 1 }, { word: 'spacewalk', start: 4.8, end: 5.5 }]);
  } finally {
    deepgram.reply = undefined;
  }
});

test('a client that leaves cancels the provider call: the provider sees its request closed, our log says 499', async () => {
  await routeTo(server, 'oai', 'whisper-1');
  openai.behaviour = 'hang';
  const seen = openai.requests.length;
  const abandoned = openai.abandoned;
  const client = new AbortController();
  try {
    const res = transcribe(server, { file: wavBlob(JFK) }, { ...server.auth, 'X-Request-Id': 'leaves-early' }, client.signal);
    for (let i = 0; i < 1000 && openai.requests.length === seen; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(openai.requests.length, seen + 1, 'the call reached the provider');
    client.abort();
    await assert.rejects(res);
    // The provider timeout is 60 s: only the cancel can close the request within this bound.
    for (let i = 0; i < 1000 && openai.abandoned === abandoned; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(openai.abandoned, abandoned + 1, 'the provider saw its request closed');
    let line: Record<string, unknown> | undefined;
    for (let i = 0; i < 1000 && !line; i++) {
      line = logs.find((l) => l.msg === 'request' && l.requestId === 'leaves-early');
      if (!line) await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(line?.status, 499, JSON.stringify(line));
    assert.equal(line?.errorCode, 'client_closed_request');
    assert.ok(!logs.some((l) => l.requestId === 'leaves-early' && l.msg === 'unhandled error'), 'a client leaving is not a server error');
  } finally {
    openai.behaviour = 'ok';
  }
});

test('lastError in /admin/status is cleared by the next success', async () => {
  await routeTo(server, 'oai', 'whisper-1');
  openai.behaviour = 'unauthorized';
  try {
    assert.equal((await transcribe(server, { file: wavBlob(JFK) }, server.auth)).status, 502);
    assert.equal((await lastError(server, 'oai')).status, 401);
  } finally {
    openai.behaviour = 'ok';
  }
  assert.equal((await transcribe(server, { file: wavBlob(JFK) }, server.auth)).status, 200);
  assert.equal(await lastError(server, 'oai'), null);
});

// ---- 3. Provider keys at rest

/** A server on `dataDir` with the OpenAI-like fake as provider "oai" routed. */
async function storeKey(dataDir: string, env: Record<string, string> = {}): Promise<TestServer> {
  const s = await startTestServer({ dataDir, installModels: false, env });
  await admin(s, 'PUT', '/admin/providers/oai', { kind: 'openai', baseUrl: openai.url, apiKey: OPENAI_KEY, enabled: true, models: [{ id: 'whisper-1' }] });
  await routeTo(s, 'oai', 'whisper-1');
  return s;
}

/** Restarts on the same data dir, keeping the first server's API key. */
async function restart(s: TestServer, env: Record<string, string> = {}): Promise<TestServer> {
  await s.close();
  const next = await startTestServer({ dataDir: s.dataDir, installModels: false, createKey: false, env });
  return { ...next, apiKey: s.apiKey, auth: s.auth };
}

/** A transcription answered from a restarted server: the key the provider got, or the error. */
async function callAfterRestart(s: TestServer): Promise<{ status: number; body: any; auth: string | undefined }> {
  const seen = openai.requests.length;
  const res = await transcribe(s, { file: wavBlob(JFK) }, s.auth);
  return { status: res.status, body: await res.json(), auth: openai.requests.length > seen ? openai.requests.at(-1)!.auth : undefined };
}

/** What a server whose secret cannot open the stored key does (service.ts). */
async function expectUndecryptable(s: TestServer): Promise<void> {
  const r = await callAfterRestart(s);
  assert.equal(r.status, 502, JSON.stringify(r.body));
  assert.equal(r.body.error.code, 'provider_unavailable');
  assert.equal(r.auth, undefined, 'no request reached the provider');
  const failure = await lastError(s, 'oai');
  assert.equal(failure.reason, 'key_undecryptable');
  assert.match(failure.message, /STT_SECRET_KEY or secret\.key/);
}

test('a provider key stored before a restart is decrypted after it and reaches the provider', async () => {
  let s = await storeKey(tempDataDir());
  try {
    s = await restart(s);
    const r = await callAfterRestart(s);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.auth, `Bearer ${OPENAI_KEY}`);
  } finally {
    await s.close();
  }
});

test('STT_SECRET_KEY is the key: the same one decrypts after a restart, another one reports the key undecryptable', async () => {
  const secret = { STT_SECRET_KEY: '5e'.repeat(32) };
  let s = await storeKey(tempDataDir(), secret);
  try {
    assert.ok(!existsSync(path.join(s.dataDir, 'secret.key')), 'no secret.key written when STT_SECRET_KEY is set');
    s = await restart(s, secret);
    const r = await callAfterRestart(s);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.auth, `Bearer ${OPENAI_KEY}`);

    s = await restart(s, { STT_SECRET_KEY: 'a7'.repeat(32) });
    await expectUndecryptable(s);
    // Entering the key again under the new secret mends it.
    await admin(s, 'PUT', '/admin/providers/oai', { apiKey: OPENAI_KEY });
    assert.equal((await callAfterRestart(s)).auth, `Bearer ${OPENAI_KEY}`);
    assert.equal(await lastError(s, 'oai'), null);
  } finally {
    await s.close();
  }
});

test('a secret.key replaced by another valid key: the stored provider key is reported undecryptable', async () => {
  let s = await storeKey(tempDataDir());
  try {
    writeFileSync(path.join(s.dataDir, 'secret.key'), '3c'.repeat(32) + '\n'); // read at start only
    s = await restart(s);
    await expectUndecryptable(s);
  } finally {
    await s.close();
  }
});

/** Runs `sql` on a stopped server's SQLite database. */
async function editDatabase(dataDir: string, sql: string, params: unknown[]): Promise<void> {
  const db = await openDatabase({ dataDir, databaseUrl: null });
  try {
    await db.run(sql, params);
  } finally {
    await db.close();
  }
}

test('a base URL changed in the database behind the admin API: the stored key is not sent there; moved through the admin API with its key, it is', async () => {
  const collector = await startOpenAiLike(OPENAI_KEY);
  let s = await storeKey(tempDataDir());
  try {
    // Someone who can write the database, not read the secret, points the provider at their server.
    await s.close();
    await editDatabase(s.dataDir, 'UPDATE providers SET base_url = ? WHERE id = ?', [collector.url, 'oai']);
    s = await restart(s);
    await expectUndecryptable(s);
    assert.equal(collector.requests.length, 0, 'nothing reached the new base URL');

    // The host moves the provider through the admin API, giving the key for the new URL with it.
    const moved = await admin(s, 'PUT', '/admin/providers/oai', { baseUrl: collector.url, apiKey: OPENAI_KEY });
    assert.deepEqual([moved.status, moved.body.apiKeySet], [200, true], JSON.stringify(moved.body));
    s = await restart(s);
    const seen = collector.requests.length;
    const res = await transcribe(s, { file: wavBlob(JFK) }, s.auth);
    assert.equal(res.status, 200, await res.text());
    assert.equal(collector.requests.length, seen + 1);
    assert.equal(collector.requests.at(-1)!.auth, `Bearer ${OPENAI_KEY}`);
  } finally {
    await s.close();
    await collector.close();
  }
});

test('a provider key stored before keys were bound to their rows (v1) is sealed again at the next start and still reaches the provider', async () => {
  let s = await storeKey(tempDataDir());
  try {
    await s.close();
    // As a server before 2026-12-03 left it: the key sealed with no associated data, no record of binding.
    const secretHex = readFileSync(path.join(s.dataDir, 'secret.key'), 'utf8').trim();
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', Buffer.from(secretHex, 'hex'), iv);
    const body = Buffer.concat([cipher.update(OPENAI_KEY, 'utf8'), cipher.final()]);
    await editDatabase(s.dataDir, 'UPDATE providers SET api_key_enc = ? WHERE id = ?', [`v1:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`, 'oai']);
    await editDatabase(s.dataDir, 'DELETE FROM settings WHERE key = ?', ['provider_keys_bound_at']);
    s = await restart(s);
    const r = await callAfterRestart(s);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.auth, `Bearer ${OPENAI_KEY}`);
    await s.close();
    const db = await openDatabase({ dataDir: s.dataDir, databaseUrl: null });
    try {
      assert.match((await db.get<{ api_key_enc: string }>('SELECT api_key_enc FROM providers WHERE id = ?', ['oai']))!.api_key_enc, /^v2:/);
    } finally {
      await db.close();
    }
    s = await restart(s);
  } finally {
    await s.close();
  }
});

test('a damaged secret.key stops the server at start, naming the file, and is left as it was', async () => {
  const s = await storeKey(tempDataDir());
  await s.close();
  const file = path.join(s.dataDir, 'secret.key');
  writeFileSync(file, 'not a key\n');
  const child = startChild({ STT_DATA_DIR: s.dataDir });
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([child.exited, new Promise((r) => (timer = setTimeout(() => r('still running'), 60_000)))]);
  clearTimeout(timer);
  if (code === 'still running') child.child.kill('SIGKILL');
  assert.equal(code, 1, child.output());
  assert.ok(child.output().includes(`${file} is not 64 hex characters`), child.output());
  assert.equal(readFileSync(file, 'utf8'), 'not a key\n');
});
