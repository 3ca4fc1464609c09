// Operating the server: /ready for load balancers, /metrics for Prometheus
// (values checked after real requests, not just names), Server-Timing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { AUDIO_DIR, FAKE_OPENAI_KEY, startOpenAiLike, type FakeServer } from '../../fixtures';
import { gateModelLoads, startTestServer, transcribe, wavBlob, type TestServer } from '../helpers/server';

const JFK = readFileSync(path.join(AUDIO_DIR, 'jfk.wav'));
let server: TestServer;
let provider: FakeServer;

before(async () => {
  provider = await startOpenAiLike(FAKE_OPENAI_KEY);
  server = await startTestServer({ routing: { mode: 'local', localModel: 'whisper-base' } });
});
after(async () => {
  await server?.close();
  await provider?.close();
});

const adminAuth = () => ({ Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' });
async function admin(method: string, route: string, body?: unknown): Promise<void> {
  const res = await fetch(`${server.url}${route}`, { method, headers: adminAuth(), body: body === undefined ? undefined : JSON.stringify(body) });
  assert.ok(res.ok, `${method} ${route}: ${res.status} ${await res.text()}`);
}
async function ready(s: TestServer = server): Promise<{ status: number; body: { ready?: boolean; runtime?: string; error?: { code: string } } }> {
  const res = await fetch(`${s.url}/ready`);
  return { status: res.status, body: await res.json() };
}

/** One sample's value from Prometheus text, by name and exact labels; undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`).sort().join(',');
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = (m[2] ?? '').split(/,(?=[a-zA-Z_]\w*=")/).filter(Boolean).sort().join(',');
    if (have === want) return Number(m[3]);
  }
  return undefined;
}
const scrape = async (s: TestServer = server) => (await fetch(`${s.url}/metrics`, { headers: { Authorization: `Bearer ${s.adminKey}` } })).text();

test('/ready: 200 while the local model serves, 503 with the reason while it loads or when none is active; /health stays 200', async () => {
  assert.deepEqual(await ready(), { status: 200, body: { ready: true, mode: 'local', runtime: 'whisper-base' } });

  // Loads held at a gate: the loading state is seen however fast a load is.
  const local = server.services.local;
  const switching = gateModelLoads(server);
  try {
    // Switching: the previous model serves until the new one is ready, so the replica stays ready.
    await admin('PUT', '/admin/routing', { localModel: 'parakeet-tdt-0.6b-v3' });
    assert.equal(local.status().state, 'loading');
    assert.deepEqual(await ready(), { status: 200, body: { ready: true, mode: 'local', runtime: 'whisper-base' } });
    switching.open();
    await local.ready();
    assert.deepEqual(await ready(), { status: 200, body: { ready: true, mode: 'local', runtime: 'parakeet-tdt-0.6b-v3' } });
  } finally {
    switching.restore();
  }
  // Loading with none serving: not ready.
  const fromNothing = gateModelLoads(server);
  try {
    await admin('PUT', '/admin/routing', { localModel: null });
    await admin('PUT', '/admin/routing', { localModel: 'whisper-base' });
    const loading = await ready();
    assert.deepEqual([loading.status, loading.body.error?.code], [503, 'model_loading']);
    assert.equal((await fetch(`${server.url}/health`)).status, 200);
  } finally {
    fromNothing.restore();
    await local.ready();
  }
  await admin('PUT', '/admin/routing', { localModel: null });
  const none = await ready();
  assert.deepEqual([none.status, none.body.error?.code], [503, 'no_active_model']);
  await admin('PUT', '/admin/routing', { localModel: 'whisper-base' });
  await local.ready();
  assert.deepEqual(await ready(), { status: 200, body: { ready: true, mode: 'local', runtime: 'whisper-base' } });
});

test('/ready in Cloud mode: the provider enabled with a key, and not failing', async () => {
  await admin('PUT', '/admin/providers/oai', { kind: 'openai', baseUrl: provider.url, apiKey: FAKE_OPENAI_KEY, enabled: true, models: [{ id: 'whisper-1' }] });
  await admin('PUT', '/admin/routing', { mode: 'cloud', cloud: { providerId: 'oai', model: 'whisper-1' } });
  try {
    assert.deepEqual(await ready(), { status: 200, body: { ready: true, mode: 'cloud', runtime: 'oai/whisper-1' } });
    provider.behaviour = 'unauthorized';
    assert.equal((await transcribe(server, { file: wavBlob(JFK) }, server.auth)).status, 502);
    const failing = await ready();
    assert.deepEqual([failing.status, failing.body.error?.code], [503, 'provider_failing']);
    provider.behaviour = 'ok';
    assert.equal((await transcribe(server, { file: wavBlob(JFK) }, server.auth)).status, 200);
    assert.equal((await ready()).status, 200, 'a success clears the failure');

    const text = await scrape();
    assert.equal(sample(text, 'stt_provider_calls_total', { provider: 'oai', status: '401' }), 1);
    assert.equal(sample(text, 'stt_provider_calls_total', { provider: 'oai', status: '200' }), 1);
    assert.equal(sample(text, 'stt_provider_errors_total', { provider: 'oai', reason: 'http_status' }), 1);
    assert.equal(sample(text, 'stt_audio_seconds_total', { runtime: 'oai/whisper-1' }), 11);

  } finally {
    provider.behaviour = 'ok';
    await admin('PUT', '/admin/routing', { mode: 'local', localModel: 'whisper-base' });
  }
});

test('/metrics: request counts, latencies, audio seconds and queue state with their values after real requests', async () => {
  const before = await scrape();
  const count = (text: string, status: string) => sample(text, 'stt_http_requests_total', { route: '/v1/audio/transcriptions', method: 'POST', status }) ?? 0;
  const transcribed = (text: string) => sample(text, 'stt_audio_seconds_total', { runtime: 'whisper-base' }) ?? 0;
  const sttCount = (text: string) => sample(text, 'stt_transcription_seconds_count', { runtime: 'whisper-base' }) ?? 0;
  for (let i = 0; i < 3; i++) assert.equal((await transcribe(server, { file: wavBlob(JFK) }, server.auth)).status, 200);
  assert.equal((await transcribe(server, { file: wavBlob(Buffer.from('not a wav')) }, server.auth)).status, 400);
  // A client that leaves while its job runs: an abort counted as the client's.
  const left = new AbortController();
  const pending = transcribe(server, { file: wavBlob(JFK) }, server.auth, left.signal).catch(() => null);
  while (server.services.local.scheduler.stats().running === 0) await new Promise((r) => setTimeout(r, 5));
  left.abort();
  await pending;
  await server.services.local.scheduler.idle();

  const after = await scrape();
  assert.equal(count(after, '200') - count(before, '200'), 3);
  assert.equal(count(after, '400') - count(before, '400'), 1);
  assert.equal(count(after, '499') - count(before, '499'), 1);
  assert.equal(transcribed(after) - transcribed(before), 33);
  assert.equal(sttCount(after) - sttCount(before), 3);
  assert.equal((sample(after, 'stt_aborts_total', { reason: 'client' }) ?? 0) - (sample(before, 'stt_aborts_total', { reason: 'client' }) ?? 0), 1);
  assert.ok((sample(after, 'stt_upload_decode_seconds_count') ?? 0) >= 3);
  assert.ok((sample(after, 'stt_queue_wait_seconds_count') ?? 0) >= 3);
  assert.ok((sample(after, 'stt_real_time_factor_sum', { runtime: 'whisper-base' }) ?? 0) > 0);
  assert.equal(sample(after, 'stt_queue_depth'), 0);
  assert.equal(sample(after, 'stt_jobs', { state: 'running' }), 0);
  assert.equal(sample(after, 'stt_jobs', { state: 'paused' }), 0);
  assert.equal(sample(after, 'stt_preemptions_total'), server.services.local.scheduler.stats().preemptions);
  assert.ok((sample(after, 'stt_model_load_seconds', { runtime: 'whisper-base' }) ?? 0) > 0);
  assert.ok((sample(after, 'process_resident_memory_bytes') ?? 0) > 50e6);
  assert.ok(sample(after, 'nodejs_eventloop_lag_seconds') !== undefined);
  // Unmatched paths share one series: a scanner cannot grow the registry.
  await fetch(`${server.url}/random-${Date.now()}`);
  assert.ok((sample(await scrape(), 'stt_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' }) ?? 0) >= 1);
});

test('Server-Timing says where a transcription\'s time went', async () => {
  const res = await transcribe(server, { file: wavBlob(JFK) }, server.auth);
  assert.equal(res.status, 200);
  const timing = res.headers.get('server-timing') ?? '';
  assert.match(timing, /^decode;dur=\d+\.\d, queue;dur=\d+\.\d, stt;dur=\d+\.\d$/);
  const ms = Object.fromEntries(timing.split(', ').map((p) => [p.split(';')[0], Number(p.split('=')[1])]));
  assert.ok(ms.stt >= ms.queue, timing);
});

test('STT_METRICS: the admin key by default, open when public, absent when off', async () => {
  assert.equal((await fetch(`${server.url}/metrics`)).status, 401);
  assert.equal((await fetch(`${server.url}/metrics`, { headers: server.auth })).status, 401, 'an API key is not the admin key');
  assert.notEqual((await fetch(`${server.url}/METRICS`)).status, 200, 'no way around the guard by case');
  const res = await fetch(`${server.url}/metrics`, { headers: { Authorization: `Bearer ${server.adminKey}` } });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  for (const [access, status] of [['public', 200], ['off', 404]] as const) {
    const other = await startTestServer({ env: { STT_METRICS: access } });
    try {
      assert.equal((await fetch(`${other.url}/metrics`)).status, status, access);
    } finally {
      await other.close();
    }
  }
});

test('STT_METRICS_TOKEN reads /metrics and nothing else; the admin key still reads it', async () => {
  const token = 'metrics-token-0123456789';
  const other = await startTestServer({ env: { STT_METRICS_TOKEN: token } });
  const as = (bearer: string) => ({ headers: { Authorization: `Bearer ${bearer}` } });
  try {
    const res = await fetch(`${other.url}/metrics`, as(token));
    assert.equal(res.status, 200);
    assert.match(await res.text(), /stt_http_requests_total/);
    assert.equal((await fetch(`${other.url}/metrics`, as(other.adminKey))).status, 200);
    assert.equal((await fetch(`${other.url}/metrics`, as(`${token}x`))).status, 401);
    for (const route of ['/admin/status', '/admin/routing', '/admin/api-keys']) {
      const denied = await fetch(`${other.url}${route}`, as(token));
      assert.equal(denied.status, 401, route);
      assert.equal((await denied.json()).error.code, 'invalid_api_key', route);
    }
    assert.equal((await fetch(`${other.url}/v1/models`, as(token))).status, 401, 'nor is it an API key');
  } finally {
    await other.close();
  }
});
