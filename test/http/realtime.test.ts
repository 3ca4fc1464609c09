// Realtime transcription sessions (GET /v1/realtime, src/http/realtime/) with
// the `ws` client, on the synthetic stand-in model: the handshake's gate,
// both dialects, a committed turn's events and text (the same as an upload
// of the same audio), bad events answered with `error` on a session that
// stays usable, the key's audio budget, idle and shutdown closes; with the
// Silero model installed, server_vad (real Silero on real speech): turns cut
// where the speech stops, nothing heard in silence, the buffer's limit.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import WebSocket from 'ws';
import { installStandInModels, startTestServer, tempDataDir, transcribe, wavBlob, type TestServer } from '../helpers/server';
import { AUDIO_DIR, pcm16At24k, readPcm16Mono, VAD_FIXTURE, writeWav } from '../../fixtures';
import { VAD_FILE } from '../../src/stt/catalogue';
import type { CreatedApiKey } from '../../src/admin-api';

let server: TestServer;
/** The same, with the Silero model installed: sessions start with server_vad. */
let vadServer: TestServer;
/** vadServer's log lines (info and above). */
const vadLogs: Record<string, unknown>[] = [];
const LOCAL = { mode: 'local' as const, localModel: 'whisper-base' };
const JFK = readPcm16Mono(readFileSync(path.join(AUDIO_DIR, 'jfk.wav'))).samples;

const JFK_24K = pcm16At24k(JFK);
const base64 = (pcm: Int16Array) => Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength).toString('base64');

before(async () => {
  server = await startTestServer({ routing: LOCAL, env: { STT_REALTIME_SESSIONS_PER_KEY: '2', STT_REALTIME_MAX_SESSIONS: '3' } });
  const dataDir = tempDataDir();
  await installStandInModels(dataDir);
  symlinkSync(VAD_FIXTURE, `${dataDir}/models/${VAD_FILE.name}`);
  // The buffer's limit (at most STT_MAX_AUDIO_SECONDS) low enough for JFK to run past it.
  vadServer = await startTestServer({ dataDir, installModels: false, routing: LOCAL, logs: vadLogs, env: { STT_MAX_AUDIO_SECONDS: '4' } });
});
after(async () => {
  await server?.close();
  await vadServer?.close();
});

const wsUrl = (query = '?intent=transcription', on: TestServer = server) => `${on.url.replace('http', 'ws')}/v1/realtime${query}`;

/** An open session and the events it received, in order. */
async function connect(opts: { query?: string; key?: string | null; headers?: Record<string, string>; protocols?: string[]; on?: TestServer } = {}) {
  const on = opts.on ?? server;
  const key = opts.key === undefined ? on.apiKey : opts.key;
  const ws = new WebSocket(wsUrl(opts.query, on), opts.protocols ?? [], { headers: { ...(key ? { Authorization: `Bearer ${key}` } : {}), ...opts.headers } });
  const events: Record<string, any>[] = [];
  const waiters: { type: string; resolve: (e: Record<string, any>) => void }[] = [];
  let seen = 0;
  ws.on('message', (data) => {
    const event = JSON.parse(String(data));
    events.push(event);
    const i = waiters.findIndex((w) => w.type === event.type);
    if (i >= 0) waiters.splice(i, 1)[0].resolve(event);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return {
    ws,
    events,
    closed,
    send: (event: object) => ws.send(JSON.stringify(event)),
    /** The next event of `type` not yet taken (waits for it). */
    next(type: string): Promise<Record<string, any>> {
      const found = events.slice(seen).find((e) => e.type === type);
      if (found) {
        seen = events.indexOf(found) + 1;
        return Promise.resolve(found);
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${type} within 60 s; events: ${events.map((e) => e.type).join(', ')}`)), 60_000);
        waiters.push({ type, resolve: (e) => { clearTimeout(timer); seen = events.indexOf(e) + 1; resolve(e); } });
      });
    },
  };
}

/** The handshake's refusal: status and JSON body. */
async function refused(url: string, headers: Record<string, string> = {}, protocols: string[] = []): Promise<{ status: number; body: any }> {
  const ws = new WebSocket(url, protocols, { headers });
  return new Promise((resolve, reject) => {
    ws.once('open', () => reject(new Error('the session opened')));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(body) }));
    });
    ws.once('error', () => undefined);
  });
}

async function sendTurn(s: Awaited<ReturnType<typeof connect>>, pcm: Int16Array, chunkSamples = 2400): Promise<void> {
  for (let i = 0; i < pcm.length; i += chunkSamples) s.send({ type: 'input_audio_buffer.append', audio: base64(pcm.subarray(i, i + chunkSamples)) });
  s.send({ type: 'input_audio_buffer.commit', event_id: 'evt_commit' });
}

test('the handshake refuses with the error envelope: no key, a bad key, another path, another intent, an unknown model', async () => {
  const auth = { Authorization: `Bearer ${server.apiKey}` };
  const cases: [string, Record<string, string>, number, string][] = [
    [wsUrl(), {}, 401, 'invalid_api_key'],
    [wsUrl(), { Authorization: 'Bearer sk-not-a-key' }, 401, 'invalid_api_key'],
    [`${server.url.replace('http', 'ws')}/v1/elsewhere`, auth, 404, 'not_found'],
    [wsUrl('?intent=conversation'), auth, 400, 'unsupported_intent'],
    [wsUrl(''), auth, 400, 'missing_required_parameter'],
    [wsUrl('?model=gpt-5-realtime'), auth, 404, 'model_not_found'],
  ];
  for (const [url, headers, status, code] of cases) {
    const r = await refused(url, headers);
    assert.equal(r.status, status, `${url} ${JSON.stringify(headers)}`);
    assert.equal(r.body.error.code, code);
    assert.equal(typeof r.body.error.message, 'string');
  }
  // Another upgrade (curl --http2's h2c) is served as a plain request where Node can tell it apart, refused clearly where not (Node 20).
  const [major, minor] = process.versions.node.split('.').map(Number);
  const nodeSplitsUpgrades = major > 24 || (major === 24 && minor >= 9) || (major === 22 && minor >= 21);
  const h2c = await new Promise<{ status: number; body: any }>((resolve, reject) => {
    const req = http.get(`${server.url}/health`, { headers: { Connection: 'Upgrade, HTTP2-Settings', Upgrade: 'h2c', 'HTTP2-Settings': '' } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(body) }));
    });
    req.on('error', reject);
  });
  if (nodeSplitsUpgrades) assert.equal(h2c.status, 200);
  else assert.deepEqual([h2c.status, h2c.body.error.code], [400, 'upgrade_not_supported']);
  // A plain request to the path is not an upgrade: Koa answers it like any unknown route.
  assert.equal((await fetch(`${server.url}/v1/realtime?intent=transcription`, { headers: auth })).status, 404);
});

test('a committed turn: committed, item created, one delta, completed with the text an upload of the same audio gets', async () => {
  const s = await connect();
  const created = await s.next('session.created');
  assert.equal(created.session.type, 'transcription');
  assert.equal(created.session.audio.input.turn_detection, null);
  s.send({ type: 'session.update', session: { type: 'transcription', audio: { input: { format: { type: 'audio/pcm', rate: 24000 }, transcription: { model: 'service-local-stt', language: 'en' }, turn_detection: null } } } });
  const updated = await s.next('session.updated');
  assert.equal(updated.session.audio.input.transcription.language, 'en');
  await sendTurn(s, JFK_24K);
  const committed = await s.next('input_audio_buffer.committed');
  const item = await s.next('conversation.item.created');
  assert.equal(item.item.id, committed.item_id);
  assert.equal(committed.previous_item_id, null);
  const completed = await s.next('conversation.item.input_audio_transcription.completed');
  assert.equal(completed.item_id, committed.item_id);
  assert.ok(Math.abs(completed.usage.seconds - JFK_24K.length / 24000) < 0.01, `usage ${completed.usage.seconds}`);
  assert.ok(completed.transcript.length > 0, 'the stand-in model says something for 11 s of speech');
  const deltas = s.events.filter((e) => e.type === 'conversation.item.input_audio_transcription.delta').map((e) => e.delta);
  assert.deepEqual(deltas, [completed.transcript], 'one delta, the whole text');
  // The same 24-kHz samples uploaded as a float WAV: the same resampler, the same decoding.
  const wav = writeWav({ rate: 24000, encoding: 'float32', channels: [Float32Array.from(JFK_24K, (v) => v / 32768)] });
  const upload = await transcribe(server, { file: wavBlob(wav), language: 'en' }, server.auth);
  assert.equal(upload.status, 200);
  assert.equal(completed.transcript, ((await upload.json()) as { text: string }).text.trim());
  // A second turn names the first as its previous item.
  await sendTurn(s, JFK_24K.subarray(0, 24000));
  const second = await s.next('input_audio_buffer.committed');
  assert.equal(second.previous_item_id, committed.item_id);
  await s.next('conversation.item.input_audio_transcription.completed');
  s.ws.close();
  await s.closed;
});

test('bad events get an error event naming the problem and the client event, and the session goes on', async () => {
  const s = await connect();
  await s.next('session.created');
  s.ws.send('{not json');
  assert.equal((await s.next('error')).error.code, 'invalid_json');
  s.send({ type: 'response.create', event_id: 'evt_1' });
  let e = await s.next('error');
  assert.equal(e.error.code, 'unknown_event');
  assert.equal(e.error.param, 'type');
  assert.equal(e.error.event_id, 'evt_1');
  s.send({ type: 'input_audio_buffer.append', audio: 'AAA' });
  assert.equal((await s.next('error')).error.code, 'invalid_value');
  s.send({ type: 'input_audio_buffer.append', audio: Buffer.from([1, 2, 3]).toString('base64') });
  assert.equal((await s.next('error')).error.code, 'invalid_value');
  s.send({ type: 'input_audio_buffer.commit' });
  assert.equal((await s.next('error')).error.code, 'input_audio_buffer_commit_empty');
  s.send({ type: 'session.update', session: { type: 'transcription', audio: { input: { turn_detection: { type: 'server_vad' } } } } });
  e = await s.next('error');
  assert.equal(e.error.code, 'unsupported_turn_detection');
  assert.equal(e.error.param, 'session.audio.input.turn_detection');
  assert.match(e.error.message, /not installed/);
  s.send({ type: 'session.update', session: { type: 'realtime' } });
  assert.equal((await s.next('error')).error.code, 'unsupported_session_type');
  s.send({ type: 'session.update', session: { type: 'transcription', audio: { input: { format: { type: 'audio/pcm', rate: 16000 } } } } });
  assert.equal((await s.next('error')).error.code, 'unsupported_audio_format');
  s.send({ type: 'session.update', session: { type: 'transcription', audio: { input: { transcription: { language: 'xx' } } } } });
  assert.equal((await s.next('error')).error.code, 'unsupported_language');
  s.ws.send(Buffer.from([0, 1, 2]), { binary: true });
  assert.equal((await s.next('error')).error.code, 'invalid_event');
  // Cleared audio is gone: a commit after a clear has nothing to commit.
  s.send({ type: 'input_audio_buffer.append', audio: base64(JFK_24K.subarray(0, 4800)) });
  s.send({ type: 'input_audio_buffer.clear' });
  await s.next('input_audio_buffer.cleared');
  s.send({ type: 'input_audio_buffer.commit' });
  assert.equal((await s.next('error')).error.code, 'input_audio_buffer_commit_empty');
  // Still usable.
  await sendTurn(s, JFK_24K.subarray(0, 48000));
  await s.next('conversation.item.input_audio_transcription.completed');
  assert.deepEqual(s.events.filter((e) => e.type === 'error').map((e) => e.error.code), [
    'invalid_json', 'unknown_event', 'invalid_value', 'invalid_value', 'input_audio_buffer_commit_empty', 'unsupported_turn_detection',
    'unsupported_session_type', 'unsupported_audio_format', 'unsupported_language', 'invalid_event', 'input_audio_buffer_commit_empty',
  ], 'every bad event answered once, in order, and nothing else');
  // 20 bad events in a row: not the protocol, the session is closed.
  for (let i = 0; i < 20; i++) s.send({ type: 'nonsense' });
  assert.equal((await s.closed).code, 1008);
});

test('an event over 2 MiB closes the session with 1009 (ws\'s maxPayload)', async () => {
  const s = await connect();
  await s.next('session.created');
  s.send({ type: 'input_audio_buffer.append', audio: 'A'.repeat(3 * 1024 * 1024) });
  assert.equal((await s.closed).code, 1009);
});

test('the beta dialect (OpenAI-Beta: realtime=v1) is answered in its own events; the subprotocol carries the key and "realtime" is selected', async () => {
  const beta = await connect({ headers: { 'OpenAI-Beta': 'realtime=v1' } });
  const created = await beta.next('transcription_session.created');
  assert.equal(created.session.input_audio_format, 'pcm16');
  beta.send({ type: 'transcription_session.update', session: { input_audio_format: 'pcm16', input_audio_transcription: { model: 'service-local-stt', language: 'en' }, turn_detection: null } });
  assert.equal((await beta.next('transcription_session.updated')).session.input_audio_transcription.language, 'en');
  beta.ws.close();
  await beta.closed;
  const browser = await connect({ key: null, protocols: ['realtime', `openai-insecure-api-key.${server.apiKey}`] });
  assert.equal(browser.ws.protocol, 'realtime');
  await browser.next('session.created');
  browser.ws.close();
  await browser.closed;
});

test('limits: sessions per key, and the key\'s audio budget per turn', async () => {
  const res = await fetch(`${server.url}/admin/api-keys`, {
    method: 'POST', headers: { Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'live-five-seconds', audioSecondsPerDay: 5 }),
  });
  const k = (await res.json()) as CreatedApiKey;
  const one = await connect({ key: k.key });
  const two = await connect({ key: k.key });
  const third = await refused(wsUrl(), { Authorization: `Bearer ${k.key}` });
  assert.deepEqual([third.status, third.body.error.code], [429, 'too_many_sessions']);
  // STT_REALTIME_MAX_SESSIONS=3 here: one more key's session fits, the next does not.
  const other = await connect();
  const fourth = await refused(wsUrl(), server.auth);
  assert.deepEqual([fourth.status, fourth.body.error.code], [503, 'too_many_sessions']);
  other.ws.close();
  two.ws.close();
  await Promise.all([other.closed, two.closed]);
  // 11 s against a 5-s budget: the turn fails with the budget's code; a short one still fits.
  await sendTurn(one, JFK_24K);
  const failed = await one.next('conversation.item.input_audio_transcription.failed');
  assert.equal(failed.error.code, 'audio_budget_exceeded');
  await sendTurn(one, JFK_24K.subarray(0, 48000));
  const ok = await one.next('conversation.item.input_audio_transcription.completed');
  assert.equal(ok.usage.seconds, 2);
  one.ws.close();
  await one.closed;
});

test('each turn counts against the key\'s request rate, as an upload does: past it, the turn fails with rate_limit_exceeded and the session goes on', async () => {
  const admin = { Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' };
  const k = (await (await fetch(`${server.url}/admin/api-keys`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'three-a-minute', requestsPerMinute: 3 }) })).json()) as CreatedApiKey;
  // The handshake is one request, each turn one more: two turns fit in the minute, the third does not.
  const s = await connect({ key: k.key });
  for (let turn = 0; turn < 2; turn++) {
    await sendTurn(s, JFK_24K.subarray(0, 24000));
    assert.equal((await s.next('conversation.item.input_audio_transcription.completed')).usage.seconds, 1);
  }
  await sendTurn(s, JFK_24K.subarray(0, 24000));
  assert.equal((await s.next('conversation.item.input_audio_transcription.failed')).error.code, 'rate_limit_exceeded');
  assert.equal(s.ws.readyState, s.ws.OPEN);
  s.ws.close();
  await s.closed;
});

test('a key given a budget while its session is open is held to it at the next turn; a key revoked meanwhile gets invalid_api_key and the session closes', async () => {
  const admin = { Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' };
  const k = (await (await fetch(`${server.url}/admin/api-keys`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'live-changed' }) })).json()) as CreatedApiKey;
  const s = await connect({ key: k.key });
  await sendTurn(s, JFK_24K.subarray(0, 48000));
  assert.equal((await s.next('conversation.item.input_audio_transcription.completed')).usage.seconds, 2);
  assert.equal((await fetch(`${server.url}/admin/api-keys/${k.id}`, { method: 'PATCH', headers: admin, body: JSON.stringify({ audioSecondsPerDay: 3 }) })).status, 200);
  await sendTurn(s, JFK_24K.subarray(0, 48000));
  assert.equal((await s.next('conversation.item.input_audio_transcription.failed')).error.code, 'audio_budget_exceeded');
  assert.equal((await fetch(`${server.url}/admin/api-keys/${k.id}/revoke`, { method: 'POST', headers: admin })).status, 200);
  await sendTurn(s, JFK_24K.subarray(0, 24000));
  assert.equal((await s.next('error')).error.code, 'invalid_api_key');
  assert.equal((await s.closed).code, 1008);
});

test('STT_REALTIME_MAX_SESSIONS=0: a handshake with a key gets 404 realtime_disabled, whatever it asks for; without a key, 401 as before', async () => {
  const own = await startTestServer({ routing: LOCAL, env: { STT_REALTIME_MAX_SESSIONS: '0' } });
  try {
    const url = (query: string) => `${own.url.replace('http', 'ws')}/v1/realtime${query}`;
    for (const query of ['?intent=transcription', '?model=gpt-5-realtime', '']) {
      const r = await refused(url(query), own.auth);
      assert.equal(r.status, 404, query);
      assert.equal(r.body.error.code, 'realtime_disabled', query);
    }
    assert.equal((await refused(url('?intent=transcription'))).body.error.code, 'invalid_api_key');
    // Uploads are not touched by it.
    assert.equal((await transcribe(own, { file: wavBlob(readFileSync(path.join(AUDIO_DIR, 'jfk.wav'))) }, own.auth)).status, 200);
  } finally {
    await own.close();
  }
});

test('a session with no event for STT_REALTIME_IDLE_TIMEOUT_MS gets error session_idle_timeout and close 1008', async () => {
  const own = await startTestServer({ routing: LOCAL, env: { STT_REALTIME_IDLE_TIMEOUT_MS: '300' } });
  try {
    const ws = new WebSocket(`${own.url.replace('http', 'ws')}/v1/realtime?intent=transcription`, { headers: own.auth });
    const events: any[] = [];
    ws.on('message', (d) => events.push(JSON.parse(String(d))));
    const code = await new Promise<number>((resolve) => ws.on('close', (c) => resolve(c)));
    assert.equal(code, 1008);
    assert.deepEqual(events.map((e) => e.type), ['session.created', 'error']);
    assert.equal(events[1].error.code, 'session_idle_timeout');
  } finally {
    await own.close();
  }
});

test('shutdown ends an open session with 1001 after its committed turn is answered', async () => {
  const own = await startTestServer({ routing: LOCAL });
  try {
    const ws = new WebSocket(`${own.url.replace('http', 'ws')}/v1/realtime?intent=transcription`, { headers: own.auth });
    const events: any[] = [];
    ws.on('message', (d) => events.push(JSON.parse(String(d))));
    await new Promise((resolve) => ws.once('open', resolve));
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    // Three turns committed at once; shutdown starts when the first is committed, before the last can be answered.
    for (let turn = 0; turn < 3; turn++) {
      for (let i = 0; i < JFK_24K.length; i += 4800) ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: base64(JFK_24K.subarray(i, i + 4800)) }));
      ws.send(JSON.stringify({ type: 'input_audio_buffer.commit' }));
    }
    for (const until = Date.now() + 60_000; !events.some((e) => e.type === 'input_audio_buffer.committed'); await new Promise((r) => setTimeout(r, 5))) {
      assert.ok(Date.now() < until, `no turn committed within 60 s: ${events.map((e) => e.type).join(', ')}`);
    }
    await own.close();
    assert.equal(await closed, 1001);
    const committed = events.filter((e) => e.type === 'input_audio_buffer.committed').map((e) => e.item_id);
    const answered = events.filter((e) => e.type === 'conversation.item.input_audio_transcription.completed').map((e) => e.item_id);
    assert.deepEqual(answered, committed, 'every committed turn answered before the close');
    assert.equal(events.at(-1).error?.code, 'shutting_down');
  } finally {
    await own.close();
  }
});

test('a turn still waiting at the shutdown timeout is answered failed, then shutting_down and 1001: the session is not cut', { timeout: 120_000 }, async () => {
  const own = await startTestServer({ routing: LOCAL, env: { STT_SHUTDOWN_TIMEOUT_MS: '300' } });
  try {
    // Holds the one local slot until the timeout aborts what is left (real work stops in-graph there).
    const { signal } = own.services.shuttingDown;
    const held = own.services.local.scheduler.submit(1, undefined, () => new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })));
    const s = await connect({ on: own });
    for (let i = 0; i < JFK_24K.length; i += 4800) s.send({ type: 'input_audio_buffer.append', audio: base64(JFK_24K.subarray(i, i + 4800)) });
    s.send({ type: 'input_audio_buffer.commit' });
    const { item_id: itemId } = await s.next('input_audio_buffer.committed');
    await own.close();
    await held;
    assert.equal((await s.closed).code, 1001, s.events.map((e) => e.type).join(', '));
    const failed = s.events.find((e) => e.type === 'conversation.item.input_audio_transcription.failed');
    assert.equal(failed?.item_id, itemId, 'the waiting turn is answered');
    assert.equal(s.events.at(-1)!.error?.code, 'shutting_down');
  } finally {
    await own.close();
  }
});

/** A masked text frame under 64 KiB, as a client sends it (RFC 6455 5.2, 5.3). */
function clientTextFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  assert.ok(payload.length < 65536);
  const mask = randomBytes(4);
  const length = payload.length < 126 ? Buffer.from([0x80 | payload.length]) : Buffer.from([0x80 | 126, payload.length >> 8, payload.length & 0xff]);
  return Buffer.concat([Buffer.from([0x81]), length, mask, payload.map((b, i) => b ^ mask[i % 4])]);
}

test('a client that ignores the server\'s close gets nothing more transcribed or charged', { timeout: 60_000 }, async () => {
  const { port } = new URL(server.url);
  const socket = net.connect(Number(port), '127.0.0.1');
  let received = '';
  socket.on('data', (d) => (received += d.toString('latin1')));
  const waitFor = async (what: RegExp) => {
    for (let i = 0; i < 500 && !what.test(received); i++) await new Promise((r) => setTimeout(r, 20));
    assert.match(received, what);
  };
  try {
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(['GET /v1/realtime?intent=transcription HTTP/1.1', `Host: 127.0.0.1:${port}`, 'Upgrade: websocket', 'Connection: Upgrade',
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`, 'Sec-WebSocket-Version: 13', `Authorization: Bearer ${server.apiKey}`, '', ''].join('\r\n'));
    await waitFor(/session\.created/);
    const turnsBefore = await scrape(server);
    // 20 bad events in a row: error too_many_invalid_events, and the server's close frame.
    for (let i = 0; i < 20; i++) socket.write(clientTextFrame('not json'));
    await waitFor(/too_many_invalid_events/);
    // This client never answers the close: it goes on as if the session were open.
    for (let i = 0; i < JFK_24K.length; i += 4800) socket.write(clientTextFrame(JSON.stringify({ type: 'input_audio_buffer.append', audio: base64(JFK_24K.subarray(i, i + 4800)) })));
    socket.write(clientTextFrame(JSON.stringify({ type: 'input_audio_buffer.commit' })));
    await new Promise((r) => setTimeout(r, 1000));
    const turnsAfter = await scrape(server);
    const commits = (m: string) => Number(/^stt_realtime_turns_total\{ended_by="commit"\} (\d+)$/m.exec(m)?.[1] ?? 0);
    assert.equal(commits(turnsAfter), commits(turnsBefore), 'no turn taken after the close');
    assert.doesNotMatch(received.slice(received.indexOf('too_many_invalid_events')), /committed/);
  } finally {
    socket.destroy();
  }
});

const scrape = async (s: TestServer) => (await fetch(`${s.url}/metrics`, { headers: { Authorization: `Bearer ${s.adminKey}` } })).text();
/** Appends `pcm` in 100-ms events, with no commit. */
function stream(s: Awaited<ReturnType<typeof connect>>, pcm: Int16Array): void {
  for (let i = 0; i < pcm.length; i += 2400) s.send({ type: 'input_audio_buffer.append', audio: base64(pcm.subarray(i, i + 2400)) });
}
const silence = (seconds: number) => new Int16Array(Math.round(seconds * 24000));
/** The `.completed` event of item `itemId`, whenever it came. */
async function completion(s: Awaited<ReturnType<typeof connect>>, itemId: string): Promise<Record<string, any>> {
  for (let waited = 0; waited < 60_000; waited += 20) {
    const found = s.events.find((e) => e.type === 'conversation.item.input_audio_transcription.completed' && e.item_id === itemId);
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no completion of ${itemId}; events: ${s.events.map((e) => e.type).join(', ')}`);
}
/** Answered after every event sent before it: by then every turn in that audio has been cut. */
async function settled(s: Awaited<ReturnType<typeof connect>>): Promise<void> {
  s.send({ type: 'input_audio_buffer.clear' });
  await s.next('input_audio_buffer.cleared');
}

test('server_vad: on by default with the VAD model; its settings are checked; semantic_vad is refused by name', async () => {
  const s = await connect({ on: vadServer });
  const created = await s.next('session.created');
  assert.deepEqual(created.session.audio.input.turn_detection, { type: 'server_vad', threshold: 0.5, prefix_padding_ms: 300, silence_duration_ms: 500 });
  const update = (turn_detection: unknown) => s.send({ type: 'session.update', session: { type: 'transcription', audio: { input: { turn_detection } } } });
  for (const [value, param] of [
    [{ type: 'server_vad', threshold: 2 }, 'threshold'],
    [{ type: 'server_vad', prefix_padding_ms: -1 }, 'prefix_padding_ms'],
    [{ type: 'server_vad', silence_duration_ms: 0.5 }, 'silence_duration_ms'],
  ] as const) {
    update(value);
    const e = await s.next('error');
    assert.equal(e.error.code, 'invalid_value');
    assert.equal(e.error.param, `session.audio.input.turn_detection.${param}`);
  }
  update({ type: 'semantic_vad' });
  assert.equal((await s.next('error')).error.code, 'unsupported_turn_detection');
  update({ type: 'server_vad', threshold: 0.6, silence_duration_ms: 700, create_response: true });
  assert.deepEqual((await s.next('session.updated')).session.audio.input.turn_detection, { type: 'server_vad', threshold: 0.6, prefix_padding_ms: 300, silence_duration_ms: 700 });
  // The beta dialect reports it too.
  s.send({ type: 'transcription_session.update', session: { turn_detection: null } });
  assert.equal((await s.next('transcription_session.updated')).session.turn_detection, null);
  s.ws.close();
  await s.closed;
});

test('server_vad: speech then silence becomes turns with no commit; silence alone is no turn and nothing is charged for it', async () => {
  const s = await connect({ on: vadServer });
  await s.next('session.created');
  // 3 s of silence: no speech, no turn, no text.
  stream(s, silence(3));
  await settled(s);
  assert.deepEqual(s.events.map((e) => e.type), ['session.created', 'input_audio_buffer.cleared']);
  // The first 3.2 s of JFK (one phrase, "And so my fellow Americans"), then a second of silence.
  stream(s, JFK_24K.subarray(0, 3.2 * 24000));
  stream(s, silence(1));
  await settled(s);
  const [started, stopped, committed] = ['speech_started', 'speech_stopped', 'committed'].map((t) => s.events.find((e) => e.type === `input_audio_buffer.${t}`)!);
  assert.equal(stopped.item_id, started.item_id);
  assert.equal(committed.item_id, started.item_id);
  // Times on the session's clock: after the 3 s of silence, the speech's start less its 300-ms padding.
  assert.ok(started.audio_start_ms >= 3000 && started.audio_start_ms < 4000, `start ${started.audio_start_ms}`);
  assert.ok(stopped.audio_end_ms > started.audio_start_ms + 1500 && stopped.audio_end_ms <= 7200, `end ${stopped.audio_end_ms}`);
  const completed = await completion(s, started.item_id);
  assert.ok(Math.abs(completed.usage.seconds - (stopped.audio_end_ms - started.audio_start_ms) / 1000) < 0.01, `usage ${completed.usage.seconds}`);
  assert.equal(s.events.filter((e) => e.type === 'input_audio_buffer.committed').length, 1, 'one turn');
  const metrics = await scrape(vadServer);
  assert.match(metrics, /^stt_realtime_sessions 1$/m);
  assert.match(metrics, /^stt_realtime_turns_total\{ended_by="server_vad"\} 1$/m);
  s.ws.close();
  await s.closed;
});

test('server_vad: a key revoked while its turn is heard gets no drafts: invalid_api_key and close 1008, though the client clears every turn before it ends', async () => {
  const admin = { Authorization: `Bearer ${vadServer.adminKey}`, 'Content-Type': 'application/json' };
  const k = (await (await fetch(`${vadServer.url}/admin/api-keys`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'revoked-live' }) })).json()) as CreatedApiKey;
  const before = await scrape(vadServer);
  const s = await connect({ on: vadServer, key: k.key });
  await s.next('session.created');
  assert.equal((await fetch(`${vadServer.url}/admin/api-keys/${k.id}/revoke`, { method: 'POST', headers: admin })).status, 200);
  // 2.4 s of speech in real time: drafted (on an idle slot) once a second while heard, and still going on when
  // the client clears it, so no turn ends (a turn's end would read the key anyway).
  const speech = JFK_24K.subarray(0, 2.4 * 24000);
  for (let i = 0; i < speech.length && s.ws.readyState === s.ws.OPEN; i += 2400) {
    s.send({ type: 'input_audio_buffer.append', audio: base64(speech.subarray(i, i + 2400)) });
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (s.ws.readyState === s.ws.OPEN) {
    s.send({ type: 'input_audio_buffer.clear' });
    await Promise.race([s.next('input_audio_buffer.cleared'), s.closed]);
    s.ws.close();
  }
  const drafts = counter(await scrape(vadServer), 'stt_realtime_drafts_total') - counter(before, 'stt_realtime_drafts_total');
  assert.equal(drafts, 0, 'drafts decoded for a revoked key');
  assert.equal((await s.closed).code, 1008);
  assert.equal(s.events.find((e) => e.type === 'error')?.error.code, 'invalid_api_key');
});

test('server_vad: a client that leaves while its audio is being heard leaves no error in the log, and the server goes on', async () => {
  const logged = vadLogs.length;
  for (let round = 0; round < 5; round++) {
    const s = await connect({ on: vadServer });
    await s.next('session.created');
    // 3.9 s in one append (Silero hears it in two calls of at most 64 frames), then the connection dropped while it is heard.
    s.send({ type: 'input_audio_buffer.append', audio: base64(JFK_24K.subarray(0, 3.9 * 24000)) });
    await new Promise<void>((resolve) => s.ws.send('', () => resolve()));
    s.ws.terminate();
    await s.closed;
  }
  for (let i = 0; i < 50 && /^stt_realtime_sessions [1-9]/m.test(await scrape(vadServer)); i++) await new Promise((r) => setTimeout(r, 100));
  // The last session's Silero call may still be on its way after the session closed: give it time to come back.
  await new Promise((r) => setTimeout(r, 500));
  const errors = vadLogs.slice(logged).filter((l) => Number(l.level) >= 50);
  assert.deepEqual(errors, []);
  const s = await connect({ on: vadServer });
  await s.next('session.created');
  s.ws.close();
  await s.closed;
});

test('server_vad with a prefix padding that is no whole number of samples in floats (280 ms) hears its turn whole', async () => {
  const s = await connect({ on: vadServer });
  await s.next('session.created');
  s.send({ type: 'session.update', session: { type: 'transcription', audio: { input: { turn_detection: { type: 'server_vad', prefix_padding_ms: 280 } } } } });
  await s.next('session.updated');
  // (280 / 1000) * 24000 is 6720.000000000001: a position off the sample grid read samples that were not there.
  stream(s, silence(1));
  stream(s, JFK_24K.subarray(0, 3.2 * 24000));
  stream(s, silence(1));
  await settled(s);
  const started = s.events.find((e) => e.type === 'input_audio_buffer.speech_started');
  assert.ok(started, s.events.map((e) => e.type).join(', '));
  const completed = await completion(s, started.item_id);
  assert.ok(completed.usage.seconds > 1.5, `usage ${completed.usage.seconds}`);
  assert.deepEqual(s.events.filter((e) => e.type === 'error'), []);
  s.ws.close();
  await s.closed;
});

test('server_vad: a clear drops the turn being heard; speech past the buffer\'s limit is cut into turns there', async () => {
  const s = await connect({ on: vadServer });
  await s.next('session.created');
  stream(s, JFK_24K.subarray(0, 2 * 24000));
  await settled(s);
  assert.ok(s.events.some((e) => e.type === 'input_audio_buffer.speech_started'));
  stream(s, silence(1));
  await settled(s);
  assert.ok(!s.events.some((e) => e.type === 'input_audio_buffer.committed'), `the cleared turn is not committed: ${JSON.stringify(s.events.map((e) => [e.type, e.audio_start_ms ?? e.audio_end_ms]))}`);
  // A long silence_duration_ms keeps JFK one stretch of speech: the 4-s buffer cuts it.
  s.send({ type: 'session.update', session: { type: 'transcription', audio: { input: { turn_detection: { type: 'server_vad', silence_duration_ms: 5000 } } } } });
  await s.next('session.updated');
  stream(s, JFK_24K);
  stream(s, silence(5.5));
  await settled(s);
  const turns = s.events.filter((e) => e.type === 'input_audio_buffer.committed');
  // Times run on the session's clock, not the new listener's: 3 s of audio came before the update.
  const sinceUpdate = s.events.slice(s.events.findIndex((e) => e.type === 'session.updated'));
  const starts = sinceUpdate.filter((e) => e.type === 'input_audio_buffer.speech_started').map((e) => e.audio_start_ms);
  const ends = sinceUpdate.filter((e) => e.type === 'input_audio_buffer.speech_stopped').map((e) => e.audio_end_ms);
  assert.equal(starts.length, turns.length);
  for (let i = 0; i < turns.length; i++) {
    assert.ok(starts[i] >= 3000 && ends[i] > starts[i] && (i === 0 || starts[i] >= ends[i - 1]), `turn ${i}: ${starts[i]}..${ends[i]} ms`);
  }
  assert.ok(turns.length >= 3, `${turns.length} turns: ${JSON.stringify(s.events.map((e) => [e.type.replace('input_audio_buffer.', ''), e.audio_start_ms ?? e.audio_end_ms ?? e.error?.code]))}`);
  for (let i = 0; i < turns.length; i++) {
    const completed = await completion(s, turns[i].item_id);
    assert.ok(completed.usage.seconds <= 4.001 && completed.usage.seconds > 0, `turn ${i}: ${completed.usage.seconds} s`);
    assert.ok(Math.abs(completed.usage.seconds - (ends[i] - starts[i]) / 1000) < 0.01, `turn ${i}: ${completed.usage.seconds} s for ${starts[i]}..${ends[i]} ms`);
  }
  const cuts = Number(/^stt_realtime_turns_total\{ended_by="buffer_limit"\} (\d+)$/m.exec(await scrape(vadServer))?.[1]);
  assert.ok(cuts >= 2, `${cuts} turns cut at the buffer's limit`);
  s.ws.close();
  await s.closed;
});

test('server_vad turned off and on again listens as before (the listener kept loaded meanwhile)', async () => {
  const s = await connect({ on: vadServer });
  await s.next('session.created');
  const turnDetection = (value: unknown) => ({ type: 'session.update', session: { type: 'transcription', audio: { input: { turn_detection: value } } } });
  s.send(turnDetection(null));
  await s.next('session.updated');
  stream(s, JFK_24K.subarray(0, 3.2 * 24000));
  stream(s, silence(1));
  await settled(s);
  assert.ok(!s.events.some((e) => e.type === 'input_audio_buffer.speech_started'), 'off: no turn heard');
  s.send(turnDetection({ type: 'server_vad' }));
  await s.next('session.updated');
  stream(s, JFK_24K.subarray(0, 3.2 * 24000));
  stream(s, silence(1));
  await settled(s);
  const committed = s.events.filter((e) => e.type === 'input_audio_buffer.committed');
  assert.equal(committed.length, 1, s.events.map((e) => e.type).join(', '));
  await completion(s, committed[0].item_id);
  s.ws.close();
  await s.closed;
});

test('turns the client commits: appends past the buffer\'s limit are refused (input_audio_buffer_full) and dropped, however many, and the buffer still commits', async () => {
  const s = await connect({ on: vadServer });
  await s.next('session.created');
  s.send({ type: 'session.update', session: { type: 'transcription', audio: { input: { turn_detection: null } } } });
  await s.next('session.updated');
  // The 4-s buffer here: 3 s fit, 2 s more do not, 25 times over (more than the 20 bad events that close a session:
  // a full buffer is not a bad event).
  s.send({ type: 'input_audio_buffer.append', audio: base64(JFK_24K.subarray(0, 3 * 24000)) });
  for (let i = 0; i < 25; i++) s.send({ type: 'input_audio_buffer.append', audio: base64(JFK_24K.subarray(3 * 24000, 5 * 24000)) });
  for (let i = 0; i < 25; i++) {
    const full = await s.next('error');
    assert.deepEqual([full.error.code, full.error.param], ['input_audio_buffer_full', 'audio']);
  }
  s.send({ type: 'input_audio_buffer.commit' });
  const committed = await s.next('input_audio_buffer.committed');
  const completed = await s.next('conversation.item.input_audio_transcription.completed');
  assert.equal(completed.item_id, committed.item_id);
  assert.equal(completed.usage.seconds, 3, 'the refused append is not in the turn');
  s.ws.close();
  await s.closed;
});

test('server_vad: a commit while speech is heard ends that turn, and the speech after it is heard afresh', async () => {
  const s = await connect({ on: vadServer });
  await s.next('session.created');
  stream(s, JFK_24K.subarray(0, 2 * 24000));
  s.send({ type: 'input_audio_buffer.commit' });
  const committed = await s.next('input_audio_buffer.committed');
  const started = s.events.find((e) => e.type === 'input_audio_buffer.speech_started')!;
  assert.equal(committed.item_id, started.item_id, 'the turn being heard is the one committed');
  const first = await completion(s, committed.item_id);
  // A commit takes the whole buffer, as OpenAI's does: here, all 2 s (speech starts within the padding).
  assert.ok(Math.abs(first.usage.seconds - 2) < 0.01, `usage ${first.usage.seconds}`);
  // Silence after the commit: no turn from what was heard before it.
  stream(s, silence(1.5));
  await settled(s);
  assert.equal(s.events.filter((e) => e.type === 'input_audio_buffer.committed').length, 1, s.events.map((e) => e.type).join(', '));
  // Speech after it: a turn of its own, on the session's clock.
  stream(s, JFK_24K.subarray(0, 3.2 * 24000));
  stream(s, silence(1));
  await settled(s);
  const second = s.events.filter((e) => e.type === 'input_audio_buffer.speech_started')[1];
  assert.ok(second && second.audio_start_ms >= 3500, `second turn at ${second?.audio_start_ms} ms`);
  s.ws.close();
  await s.closed;
});

/** Appends `pcm` as a microphone would: 100 ms of audio every 100 ms. */
async function streamLive(s: Awaited<ReturnType<typeof connect>>, pcm: Int16Array): Promise<void> {
  for (let i = 0; i < pcm.length; i += 2400) {
    s.send({ type: 'input_audio_buffer.append', audio: base64(pcm.subarray(i, i + 2400)) });
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
const counter = (metrics: string, name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(metrics)?.[1]);

test('server_vad: a turn heard in real time is drafted while it lasts, its deltas come before .completed and join to its transcript; a key whose budget could not hold the longest turn gets no drafts', async () => {
  const before = await scrape(vadServer);
  const s = await connect({ on: vadServer });
  await s.next('session.created');
  await streamLive(s, JFK_24K.subarray(0, 3.2 * 24000));
  await streamLive(s, silence(1));
  await settled(s);
  const started = s.events.find((e) => e.type === 'input_audio_buffer.speech_started')!;
  const completed = await completion(s, started.item_id);
  const after = await scrape(vadServer);
  const drafts = counter(after, 'stt_realtime_drafts_total') - counter(before, 'stt_realtime_drafts_total');
  assert.ok(drafts >= 1, `${drafts} drafts of a 3-s turn heard in real time`);
  const deltas = s.events.filter((e) => e.type === 'conversation.item.input_audio_transcription.delta');
  assert.ok(deltas.every((d) => d.item_id === started.item_id && s.events.indexOf(d) < s.events.indexOf(completed)), 'deltas of the turn, before its .completed');
  // Joined, the deltas are the transcript, unless the transcript departed from what drafts sent (and that is counted).
  const revised = counter(after, 'stt_realtime_drafts_revised_total') - counter(before, 'stt_realtime_drafts_revised_total');
  if (revised === 0) assert.equal(deltas.map((d) => d.delta).join(''), completed.transcript);
  else assert.equal(revised, 1);
  s.ws.close();
  await s.closed;

  // 3 s a day, under this server's 4-s buffer: the same turn is transcribed, never drafted.
  const res = await fetch(`${vadServer.url}/admin/api-keys`, {
    method: 'POST', headers: { Authorization: `Bearer ${vadServer.adminKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'three-seconds', audioSecondsPerDay: 3 }),
  });
  const k = (await res.json()) as CreatedApiKey;
  const budgeted = await connect({ on: vadServer, key: k.key });
  await budgeted.next('session.created');
  await streamLive(budgeted, JFK_24K.subarray(0, 2.4 * 24000));
  await streamLive(budgeted, silence(1));
  await settled(budgeted);
  const turn = budgeted.events.find((e) => e.type === 'input_audio_buffer.speech_started')!;
  assert.equal((await completion(budgeted, turn.item_id)).type, 'conversation.item.input_audio_transcription.completed');
  assert.equal(counter(await scrape(vadServer), 'stt_realtime_drafts_total'), counter(after, 'stt_realtime_drafts_total'), 'no draft for the budgeted key');
  budgeted.ws.close();
  await budgeted.closed;
});

test('a draft gives its slot up to any other job: submitted together, the draft is aborted and the upload answered', async () => {
  const pcm = JFK.subarray(0, 8 * 16000);
  const job = (draft: boolean) => vadServer.services.stt.transcribe({
    task: 'transcribe', wav: null, pcm, durationSeconds: 8, signal: new AbortController().signal, owner: 'someone',
    filename: 'audio.wav', format: 'json', language: 'en', granularities: new Set(), cloud: null, draft,
  });
  const drafted = job(true);
  const [draftOutcome, upload] = await Promise.allSettled([drafted, job(false)]);
  assert.equal(draftOutcome.status, 'rejected');
  assert.equal((draftOutcome as PromiseRejectedResult).reason.constructor.name, 'AbortedError');
  assert.equal(upload.status, 'fulfilled');
  // Alone, a draft runs to the end.
  assert.equal(typeof (await job(true)).result.text, 'string');
});

test('server_vad with a VAD model that will not load: sessions fall back to commits, asking for it is a clear error, the server stays up', async () => {
  const dataDir = tempDataDir();
  await installStandInModels(dataDir);
  mkdirSync(`${dataDir}/models`, { recursive: true });
  writeFileSync(`${dataDir}/models/${VAD_FILE.name}`, Buffer.from('not a ggml file'));
  const broken = await startTestServer({ dataDir, installModels: false, routing: LOCAL });
  try {
    const s = await connect({ on: broken });
    assert.equal((await s.next('session.created')).session.audio.input.turn_detection, null);
    s.send({ type: 'session.update', session: { type: 'transcription', audio: { input: { turn_detection: { type: 'server_vad' } } } } });
    const e = await s.next('error');
    assert.deepEqual([e.error.type, e.error.code], ['server_error', 'vad_unavailable']);
    // Commits still work.
    await sendTurn(s, JFK_24K.subarray(0, 48000));
    await s.next('conversation.item.input_audio_transcription.completed');
    s.ws.close();
    await s.closed;
    assert.equal((await fetch(`${broken.url}/health`)).status, 200);
  } finally {
    await broken.close();
  }
});
