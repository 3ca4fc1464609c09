// Per-key limits and usage: a request rate per minute and an audio budget per
// UTC day, answered 429 with OpenAI's rate-limit headers once passed; usage
// counted per key and day in SQLite, shown in /admin/api-keys, kept across a
// restart. Other keys are never affected.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { AUDIO_DIR } from '../../fixtures';
import { startTestServer, tempDataDir, transcribe, wavBlob, type TestServer } from '../helpers/server';
import type { ApiKeyView, CreatedApiKey } from '../../src/admin-api';

const JFK = readFileSync(path.join(AUDIO_DIR, 'jfk.wav')); // 11.0 s
const dataDir = tempDataDir();
let server: TestServer;

before(async () => {
  server = await startTestServer({ dataDir, routing: { mode: 'local', localModel: 'whisper-base' } });
});
after(async () => {
  await server?.close();
});

async function admin<T>(method: string, route: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${server.url}${route}`, {
    method, headers: { Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}
const createKey = async (body: object) => (await admin<CreatedApiKey>('POST', '/admin/api-keys', body)).body;
const send = (key: string, file = JFK) => transcribe(server, { file: wavBlob(file) }, { Authorization: `Bearer ${key}` });
const listed = async (id: string) => (await admin<{ data: ApiKeyView[] }>('GET', '/admin/api-keys')).body.data.find((k) => k.id === id)!;

test('requests per minute: counted down in the headers, then 429 with Retry-After; another key is unaffected', async () => {
  const k = await createKey({ name: 'two-a-minute', requestsPerMinute: 2 });
  assert.deepEqual([k.requestsPerMinute, k.audioSecondsPerDay, k.localOnly], [2, null, false]);
  const first = await send(k.key);
  assert.equal(first.status, 200);
  assert.deepEqual([first.headers.get('x-ratelimit-limit-requests'), first.headers.get('x-ratelimit-remaining-requests')], ['2', '1']);
  assert.match(first.headers.get('x-ratelimit-reset-requests') ?? '', /^(1m0s|\d+s)$/);
  assert.equal((await send(k.key)).headers.get('x-ratelimit-remaining-requests'), '0');
  const third = await send(k.key);
  assert.equal(third.status, 429);
  const body = await third.json();
  assert.deepEqual([body.error.type, body.error.code], ['rate_limit_error', 'rate_limit_exceeded']);
  assert.ok(Number(third.headers.get('retry-after')) >= 1 && Number(third.headers.get('retry-after')) <= 60);
  assert.equal(third.headers.get('x-ratelimit-remaining-requests'), '0');
  assert.equal((await send(server.apiKey)).status, 200, 'the test key has no limit');
  assert.equal((await fetch(`${server.url}/health`)).status, 200);
});

test('audio seconds per day: a clip that would pass the budget is refused before any work, with the audio headers', async () => {
  const k = await createKey({ name: 'twenty-seconds', audioSecondsPerDay: 20 });
  const first = await send(k.key);
  assert.equal(first.status, 200);
  assert.deepEqual([first.headers.get('x-ratelimit-limit-audio-seconds'), first.headers.get('x-ratelimit-remaining-audio-seconds')], ['20', '9']);
  const second = await send(k.key);
  assert.equal(second.status, 429);
  assert.equal((await second.json()).error.code, 'audio_budget_exceeded');
  assert.equal(second.headers.get('x-ratelimit-remaining-audio-seconds'), '9');
  assert.match(second.headers.get('x-ratelimit-reset-audio-seconds') ?? '', /^(\d+h)?(\d+m)?\d+s$/);
  assert.ok(Number(second.headers.get('retry-after')) <= 86_400);

  // Raised by the host: the next request passes; removed: no audio headers at all.
  assert.equal((await admin('PATCH', `/admin/api-keys/${k.id}`, { audioSecondsPerDay: 40 })).status, 200);
  assert.equal((await send(k.key)).headers.get('x-ratelimit-remaining-audio-seconds'), '18');
  const cleared = await admin<ApiKeyView>('PATCH', `/admin/api-keys/${k.id}`, { audioSecondsPerDay: null });
  assert.equal(cleared.body.audioSecondsPerDay, null);
  assert.equal((await send(k.key)).headers.get('x-ratelimit-limit-audio-seconds'), null);
});

test('a budget set later counts what the key used before it had one', async () => {
  const k = await createKey({ name: 'unlimited-first' });
  assert.equal((await send(k.key)).status, 200);
  assert.equal((await send(k.key)).status, 200);
  assert.equal((await admin('PATCH', `/admin/api-keys/${k.id}`, { audioSecondsPerDay: 30 })).status, 200);
  const over = await send(k.key);
  assert.equal(over.status, 429, '22 s used, and 11 more would pass 30');
  assert.equal(over.headers.get('x-ratelimit-remaining-audio-seconds'), '8');
});

test('concurrent clips cannot overshoot the budget together', async () => {
  const k = await createKey({ name: 'one-clip', audioSecondsPerDay: 15 });
  const statuses = (await Promise.all([send(k.key), send(k.key), send(k.key)])).map((r) => r.status).sort();
  assert.deepEqual(statuses, [200, 429, 429]);
});

test('usage per key and day: requests, audio seconds, errors, last use; kept across a restart with the budget it counts against', async () => {
  const k = await createKey({ name: 'counted', audioSecondsPerDay: 30 });
  assert.equal((await send(k.key)).status, 200);
  assert.equal((await send(k.key)).status, 200);
  assert.equal((await send(k.key, Buffer.from('not a wav'))).status, 400);
  assert.equal((await send(k.key)).status, 429, '22 of 30 s used');
  const today = new Date().toISOString().slice(0, 10);
  const until = Date.now() + 10_000; // usage is written off the answer's path
  while ((await listed(k.id)).usage?.requests !== 4 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  const before = await listed(k.id);
  assert.deepEqual(before.usage, { day: today, requests: 4, audioSeconds: 22, errors: 2 });
  assert.ok(before.lastUsedAt);

  await server.close();
  server = await startTestServer({ dataDir, createKey: false });
  assert.deepEqual((await listed(k.id)).usage, before.usage);
  // Concurrent, as the first ones after a restart: each waits for the same read of the day's usage.
  assert.deepEqual((await Promise.all([send(k.key), send(k.key)])).map((r) => r.status), [429, 429], 'the budget still counts the 22 s used before the restart');
});

test('limits are validated: bad values and unknown fields 400, an unknown key 404', async () => {
  const k = await createKey({ name: 'validated' });
  for (const body of [{ requestsPerMinute: 0 }, { requestsPerMinute: 1.5 }, { audioSecondsPerDay: -1 }, { localOnly: 'yes' }, { burst: 3 }]) {
    const r = await admin<{ error: { code: string } }>('PATCH', `/admin/api-keys/${k.id}`, body);
    assert.equal(r.status, 400, JSON.stringify(body));
  }
  assert.equal((await admin('PATCH', '/admin/api-keys/no-such-id', { requestsPerMinute: 5 })).status, 404);
  assert.equal((await admin('POST', '/admin/api-keys', { name: 'x', requestsPerMinute: 'many' })).status, 400);
});
