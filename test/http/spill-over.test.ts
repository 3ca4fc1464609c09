// Spill-over: in Local mode, a request the local runtime cannot take in time
// goes to the host's cloud target (a loopback provider here) instead of a 503:
// queue full, model loading, predicted wait too long. Off by default; keys
// marked local-only never spill; a request the target cannot honour stays.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { AUDIO_DIR, FAKE_DEEPGRAM_KEY, FAKE_OPENAI_KEY, startDeepgramLike, startOpenAiLike, type FakeServer } from '../../fixtures';
import { gateModelLoads, startTestServer, transcribe, wavBlob, type TestServer } from '../helpers/server';

const JFK = readFileSync(path.join(AUDIO_DIR, 'jfk.wav'));
let server: TestServer;
let openai: FakeServer;
let deepgram: FakeServer;

before(async () => {
  openai = await startOpenAiLike(FAKE_OPENAI_KEY);
  deepgram = await startDeepgramLike(FAKE_DEEPGRAM_KEY);
  server = await startTestServer({ routing: { mode: 'local', localModel: 'whisper-base' }, env: { STT_QUEUE_CAPACITY: '2' } });
  await admin('PUT', '/admin/providers/oai', { kind: 'openai', baseUrl: openai.url, apiKey: FAKE_OPENAI_KEY, enabled: true, models: [{ id: 'whisper-1' }] });
  await admin('PUT', '/admin/providers/deepgram', { baseUrl: deepgram.url, apiKey: FAKE_DEEPGRAM_KEY, enabled: true });
});
after(async () => {
  await server?.close();
  await openai?.close();
  await deepgram?.close();
});

async function admin(method: string, route: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${route}`, {
    method, headers: { Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** Takes the local scheduler's one slot (and, with `waiting`, as many queue places) until released. */
function occupy(waiting = 0, owners: (string | undefined)[] = []): () => Promise<void> {
  const gates: (() => void)[] = [];
  const jobs = [1, ...Array(waiting).fill(60)].map((cost, i) =>
    server.services.local.scheduler.submit(cost, undefined, () => new Promise<void>((r) => gates.push(r)), { owner: i > 0 ? owners[i - 1] : undefined }));
  let released = 0;
  return async () => {
    // Each job's gate exists once it has started; the waiting one starts when the first ends.
    while (released < jobs.length) {
      const gate = gates.shift();
      if (gate) {
        gate();
        released++;
      }
      await new Promise((r) => setTimeout(r, 1));
    }
    await Promise.all(jobs);
  };
}

const spills = async (reason: string) => {
  const text = await (await fetch(`${server.url}/metrics`, { headers: { Authorization: `Bearer ${server.adminKey}` } })).text();
  return Number(new RegExp(`^stt_spills_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
};

test('off by default: a full queue is a 503', async () => {
  assert.equal((await admin('GET', '/admin/routing')).body.spillover, null);
  const release = occupy(2);
  try {
    const res = await transcribe(server, { file: wavBlob(JFK) }, server.auth);
    assert.equal(res.status, 503);
    assert.equal((await res.json()).error.code, 'queue_full');
  } finally {
    await release();
  }
});

test('queue full: the request goes to the spill-over provider, and says so', async () => {
  const set = await admin('PUT', '/admin/routing', { spillover: { providerId: 'oai', model: 'whisper-1' } });
  assert.deepEqual(set.body.spillover, { providerId: 'oai', model: 'whisper-1', maxWaitSeconds: null });
  const before = openai.requests.length;
  const counted = await spills('queue_full');
  const release = occupy(2);
  try {
    const res = await transcribe(server, { file: wavBlob(JFK) }, server.auth);
    assert.equal(res.status, 200);
    assert.deepEqual([res.headers.get('x-stt-runtime'), res.headers.get('x-stt-spilled')], ['oai/whisper-1', 'queue_full']);
    assert.equal((await res.json()).text, 'cloud transcript from whisper-1');
    assert.equal(openai.requests.length - before, 1);
    assert.ok(openai.requests.at(-1)!.fileStartsWithRiff, 'the provider got the uploaded WAV');
    assert.equal(await spills('queue_full') - counted, 1);

    // A key marked local-only: its audio stays, and it gets the 503.
    const local = await admin('POST', '/admin/api-keys', { name: 'on-premises', localOnly: true });
    const refused = await transcribe(server, { file: wavBlob(JFK) }, { Authorization: `Bearer ${local.body.key}` });
    assert.equal(refused.status, 503);
    assert.equal(openai.requests.length - before, 1, 'nothing of it reached the provider');
  } finally {
    await release();
  }
  // Room again: served here.
  const res = await transcribe(server, { file: wavBlob(JFK) }, server.auth);
  assert.deepEqual([res.status, res.headers.get('x-stt-runtime'), res.headers.get('x-stt-spilled')], [200, 'whisper-base', null]);
});

test('a key over its share of the queue is refused 429, not sent to the spill-over provider', async () => {
  await admin('PUT', '/admin/routing', { spillover: { providerId: 'oai', model: 'whisper-1' } });
  const key = await admin('POST', '/admin/api-keys', { name: 'flooding' });
  const before = openai.requests.length;
  // The queue (2) full: one place the key's (its share, half), one another's.
  const release = occupy(2, [key.body.id, undefined]);
  try {
    const res = await transcribe(server, { file: wavBlob(JFK) }, { Authorization: `Bearer ${key.body.key}` });
    assert.equal(res.status, 429);
    assert.equal((await res.json()).error.code, 'key_queue_full');
    assert.equal(openai.requests.length, before, 'nothing reached the provider');
    const other = await transcribe(server, { file: wavBlob(JFK) }, server.auth);
    assert.deepEqual([other.status, other.headers.get('x-stt-spilled')], [200, 'queue_full'], 'another key still spills');
  } finally {
    await release();
  }
});

test('predicted wait over the host\'s limit spills; under it the request queues here', async () => {
  // 0 s: any wait at all (the prediction scales with this machine's measured speed, which a test cannot fix).
  await admin('PUT', '/admin/routing', { spillover: { providerId: 'oai', model: 'whisper-1', maxWaitSeconds: 0 } });
  const release = occupy(0);
  try {
    // One slot busy, nothing queued: the predicted wait is 0 s, so the request waits here.
    const waited = transcribe(server, { file: wavBlob(JFK) }, server.auth);
    while (server.services.local.scheduler.stats().waiting === 0) await new Promise((r) => setTimeout(r, 5));
    assert.ok(server.services.local.scheduler.estimatedWaitSeconds() > 0, 'an 11-s clip queued: a wait');
    // From another key: this one holds its share of the queue (1 of 2) and would get 429 key_queue_full.
    const other = await admin('POST', '/admin/api-keys', { name: 'another' });
    const spilled = await transcribe(server, { file: wavBlob(JFK) }, { Authorization: `Bearer ${other.body.key}` });
    assert.deepEqual([spilled.status, spilled.headers.get('x-stt-spilled')], [200, 'predicted_wait']);
    await release();
    const local = await waited;
    assert.deepEqual([local.status, local.headers.get('x-stt-runtime')], [200, 'whisper-base']);
  } finally {
    await release();
    await admin('PUT', '/admin/routing', { spillover: { providerId: 'oai', model: 'whisper-1', maxWaitSeconds: null } });
  }
});

test('model loading with none serving spills; a request the target cannot honour does not', async () => {
  const loads = gateModelLoads(server);
  try {
    await admin('PUT', '/admin/routing', { localModel: null });
    await admin('PUT', '/admin/routing', { localModel: 'whisper-base' });
    const res = await transcribe(server, { file: wavBlob(JFK) }, server.auth);
    assert.deepEqual([res.status, res.headers.get('x-stt-spilled')], [200, 'model_loading']);
    // Meanwhile the replica is ready: the spill-over target serves.
    assert.deepEqual(await (await fetch(`${server.url}/ready`)).json(), { ready: true, mode: 'local', runtime: 'oai/whisper-1' });

    // Deepgram as the target: it cannot translate, so a translation gets the local answer (503 model_loading).
    await admin('PUT', '/admin/routing', { spillover: { providerId: 'deepgram', model: 'nova-3' } });
    const form = new FormData();
    form.append('file', wavBlob(JFK), 'a.wav');
    const translation = await fetch(`${server.url}/v1/audio/translations`, { method: 'POST', body: form, headers: server.auth });
    assert.equal(translation.status, 503);
    assert.equal((await translation.json()).error.code, 'model_loading');
    const transcription = await transcribe(server, { file: wavBlob(JFK) }, server.auth);
    assert.deepEqual([transcription.status, transcription.headers.get('x-stt-runtime')], [200, 'deepgram/nova-3']);
  } finally {
    loads.restore();
    await server.services.local.ready();
    await admin('PUT', '/admin/routing', { spillover: null });
  }
});

test('the target is checked like a cloud route; a local-only key is refused in Cloud mode', async () => {
  const bad = await admin('PUT', '/admin/routing', { spillover: { providerId: 'nobody', model: 'x' } });
  assert.deepEqual([bad.status, bad.body.error.code, bad.body.error.param], [400, 'unknown_provider', 'spillover.providerId']);
  const badModel = await admin('PUT', '/admin/routing', { spillover: { providerId: 'oai', model: 'gpt-9' } });
  assert.deepEqual([badModel.status, badModel.body.error.param], [400, 'spillover.model']);
  assert.equal((await admin('PUT', '/admin/routing', { spillover: { providerId: 'oai', model: 'whisper-1', maxWaitSeconds: -1 } })).status, 400);

  const local = await admin('POST', '/admin/api-keys', { name: 'stays-here', localOnly: true });
  await admin('PUT', '/admin/routing', { mode: 'cloud', cloud: { providerId: 'oai', model: 'whisper-1' } });
  try {
    const res = await transcribe(server, { file: wavBlob(JFK) }, { Authorization: `Bearer ${local.body.key}` });
    assert.equal(res.status, 403);
    assert.equal((await res.json()).error.code, 'local_only_key');
    assert.equal((await transcribe(server, { file: wavBlob(JFK) }, server.auth)).status, 200, 'other keys go to the cloud route');
  } finally {
    await admin('PUT', '/admin/routing', { mode: 'local' });
  }
});
