// The local scheduler seen through HTTP: parallel requests, short clips
// overtaking long ones, queue overflow, client aborts.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, transcribe, wavBlob, type TestServer } from '../helpers/server';
import { speechClip } from '../../fixtures';

const servers: TestServer[] = [];
after(() => Promise.all(servers.map((s) => s.close())));

async function server(env: Record<string, string>, whisper: 'micro-f16' | 'tiny-f16' = 'micro-f16', logs?: Record<string, unknown>[]): Promise<TestServer> {
  const s = await startTestServer({ routing: { mode: 'local', localModel: 'whisper-base' }, whisper, env, logs });
  servers.push(s);
  return s;
}

/** Polls a condition on the in-process scheduler; bounded, and not a timing assertion. */
async function until(what: string, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`timed out waiting for ${what}`);
}

test('8 parallel requests for one clip all succeed with the same transcript', async () => {
  const s = await server({ STT_PARALLEL: '2', STT_QUEUE_CAPACITY: '16' });
  const clip = wavBlob(speechClip(4));
  const results = await Promise.all(Array.from({ length: 8 }, () => transcribe(s, { file: clip }, s.auth)));
  const texts: string[] = [];
  for (const r of results) {
    assert.equal(r.status, 200);
    texts.push((await r.json()).text);
  }
  assert.ok(texts[0].length > 0, 'the model says something');
  assert.deepEqual(texts, Array(8).fill(texts[0]), 'jobs running side by side do not disturb each other');
});

test('a short clip sent after long ones returns first; the paused long ones lose nothing', async () => {
  const s = await server({ STT_PARALLEL: '1', STT_QUEUE_CAPACITY: '16' }, 'tiny-f16');
  const long = wavBlob(speechClip(60));
  const alone = await (await transcribe(s, { file: long, response_format: 'verbose_json' }, s.auth)).json();
  const order: string[] = [];
  const bodies: unknown[] = [];
  const track = (name: string, p: Promise<Response>) => p.then(async (r) => {
    assert.equal(r.status, 200);
    if (name.startsWith('long')) bodies.push(await r.json());
    else await r.text();
    order.push(name);
  });
  const longs = [1, 2].map((i) => track(`long-${i}`, transcribe(s, { file: long, response_format: 'verbose_json' }, s.auth)));
  await until('both long jobs accepted', () => { const st = s.services.local.scheduler.stats(); return st.running + st.waiting === 2; });
  const preemptionsBefore = s.services.local.scheduler.stats().preemptions;
  await track('short', transcribe(s, { file: wavBlob(speechClip(3)) }, s.auth));
  assert.equal(s.services.local.scheduler.stats().preemptions - preemptionsBefore, 1, 'the running long job was paused once, for the short one');
  const { running, paused, waiting } = s.services.local.scheduler.stats();
  assert.deepEqual({ running, paused, waiting }, { running: 1, paused: 0, waiting: 1 }, 'the paused job resumed in the freed slot');
  await Promise.all(longs);
  assert.equal(order[0], 'short', order.join(' < '));
  for (const body of bodies) assert.deepEqual(body, alone);
});

test('queue overflow answers 503 with Retry-After', async () => {
  const s = await server({ STT_PARALLEL: '1', STT_QUEUE_CAPACITY: '1' }, 'tiny-f16');
  const long = wavBlob(speechClip(60));
  const first = transcribe(s, { file: long }, s.auth);
  await until('first running', () => s.services.local.scheduler.stats().running === 1);
  const second = transcribe(s, { file: long }, s.auth);
  await until('second waiting', () => s.services.local.scheduler.stats().waiting === 1);
  // From another key: this one holds its share (STT_QUEUE_PER_KEY, half of 1) and would get 429 key_queue_full.
  const other = await s.services.apiKeys.create('another');
  const third = await transcribe(s, { file: long }, { Authorization: `Bearer ${other.key}` });
  assert.equal(third.status, 503);
  assert.match(third.headers.get('retry-after') ?? '', /^\d+$/);
  const body = await third.json();
  assert.equal(body.error.code, 'queue_full');
  assert.equal(body.error.type, 'server_error');
  assert.equal((await first).status, 200);
  assert.equal((await second).status, 200);
});

test('an aborted client frees its slot and its queue place: both jobs are aborted, not finished', async () => {
  const logs: Record<string, unknown>[] = [];
  const s = await server({ STT_PARALLEL: '1', STT_QUEUE_CAPACITY: '4' }, 'tiny-f16', logs);
  const long = wavBlob(speechClip(120));
  const running = new AbortController();
  const queued = new AbortController();
  const answered = (r: Response) => `answered ${r.status}`;
  const a = transcribe(s, { file: long }, s.auth, running.signal).then(answered, (e: Error) => e.name);
  await until('running', () => s.services.local.scheduler.stats().running === 1);
  const b = transcribe(s, { file: long }, s.auth, queued.signal).then(answered, (e: Error) => e.name);
  await until('queued', () => s.services.local.scheduler.stats().waiting === 1);
  queued.abort();
  await until('queue place freed', () => s.services.local.scheduler.stats().waiting === 0);
  running.abort();
  await until('slot freed', () => s.services.local.scheduler.stats().running === 0);
  assert.deepEqual(await Promise.all([a, b]), ['AbortError', 'AbortError'], 'both clients left before an answer');
  // A job that ran to its end would have logged its runtime and sttMs; an aborted one ends in
  // client_closed_request with neither.
  const gone = () => logs.filter((l) => l.msg === 'request' && l.path === '/v1/audio/transcriptions' && l.status === 499);
  await until('both requests logged', () => gone().length === 2);
  for (const line of gone()) {
    assert.deepEqual({ errorCode: line.errorCode, runtime: line.runtime, sttMs: line.sttMs }, { errorCode: 'client_closed_request', runtime: undefined, sttMs: undefined });
  }
  const after = await transcribe(s, { file: wavBlob(speechClip(2)) }, s.auth);
  assert.equal(after.status, 200);
});

test('one key over its share of the queue gets 429 key_queue_full; another key still finds a place', async () => {
  // A queue of 2 gives each key 1 waiting place (STT_QUEUE_PER_KEY defaults to half).
  const s = await server({ STT_PARALLEL: '1', STT_QUEUE_CAPACITY: '2' }, 'tiny-f16');
  const other = await s.services.apiKeys.create('other');
  const long = wavBlob(speechClip(120)); // long enough to still be running while the others queue
  const stop = new AbortController();
  const settled = (p: Promise<Response>) => p.then((r) => r.status, (e: Error) => e.name);
  const first = settled(transcribe(s, { file: long }, s.auth, stop.signal));
  await until('first running', () => s.services.local.scheduler.stats().running === 1);
  const second = settled(transcribe(s, { file: long }, s.auth, stop.signal));
  await until('second waiting', () => s.services.local.scheduler.stats().waiting === 1);
  const third = await transcribe(s, { file: long }, s.auth);
  assert.equal(third.status, 429);
  assert.match(third.headers.get('retry-after') ?? '', /^\d+$/);
  const body = await third.json();
  assert.deepEqual([body.error.code, body.error.type], ['key_queue_full', 'rate_limit_error']);
  const theirs = settled(transcribe(s, { file: long }, { Authorization: `Bearer ${other.key}` }, stop.signal));
  await until('the other key\'s job waiting', () => s.services.local.scheduler.stats().waiting === 2);
  stop.abort();
  assert.deepEqual(await Promise.all([first, second, theirs]), ['AbortError', 'AbortError', 'AbortError']);
});

test('a client that leaves once its job has started is charged the job\'s audio; one that leaves while queued is not', async () => {
  const s = await server({ STT_PARALLEL: '1', STT_QUEUE_CAPACITY: '4' }, 'tiny-f16');
  const key = await s.services.apiKeys.create('leaver');
  const auth = { Authorization: `Bearer ${key.key}` };
  const running = new AbortController();
  const queued = new AbortController();
  const a = transcribe(s, { file: wavBlob(speechClip(120)) }, auth, running.signal).catch((e: Error) => e.name);
  await until('running', () => s.services.local.scheduler.stats().running === 1);
  const b = transcribe(s, { file: wavBlob(speechClip(150)) }, auth, queued.signal).catch((e: Error) => e.name);
  await until('queued', () => s.services.local.scheduler.stats().waiting === 1);
  queued.abort();
  running.abort();
  assert.deepEqual(await Promise.all([a, b]), ['AbortError', 'AbortError']);
  const day = new Date().toISOString().slice(0, 10);
  let usage;
  for (let i = 0; i < 500 && (usage = (await s.services.keyUsage.onDay(day)).get(key.id))?.requests !== 2; i++) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual({ requests: usage?.requests, audioSeconds: usage?.audioSeconds }, { requests: 2, audioSeconds: 120 });
});
