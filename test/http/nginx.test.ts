// deploy/nginx.conf's own rules, run by Debian's nginx in front of loopback
// servers that play replicas whose every queue is full: what nginx answers
// by itself (a missing key before the body, per-address limits, its errors in
// the service's envelope) and that full queues never take /admin down.
// test/http/replicas.test.ts runs the same file in front of real replicas.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../fixtures';
import { TempNginx } from '../helpers/nginx';
import { KEEP_ALIVE_TIMEOUT_MS } from '../../src/http/connections';

const KEY = 'sk-stt-the-one-good-key';
const ABUSER = '127.0.0.2'; // another loopback address: nginx's per-address limits tell it from the test's own client

/** What the replicas were asked, by "METHOD path". */
const seen = new Map<string, number>();
const replicas: http.Server[] = [];
let nginx: TempNginx;

function envelope(status: number, code: string, type: string): { status: number; body: string } {
  return { status, body: JSON.stringify({ error: { message: code, type, param: null, code } }) };
}

/** A replica whose local queue is always full: audio 503 queue_full, everything else served. */
function fullReplica(req: http.IncomingMessage): { status: number; body: string } {
  const route = `${req.method} ${req.url}`;
  seen.set(route, (seen.get(route) ?? 0) + 1);
  const keyed = req.headers.authorization === `Bearer ${KEY}`;
  if (req.url === '/v1/models') return keyed ? { status: 200, body: '{"object":"list","data":[]}' } : envelope(401, 'invalid_api_key', 'authentication_error');
  if (req.url?.startsWith('/v1/audio/')) return envelope(503, 'queue_full', 'server_error');
  return { status: 200, body: '{"status":"ok"}' };
}

before(async () => {
  for (let i = 0; i < 3; i++) {
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const { status, body } = fullReplica(req);
        res.writeHead(status, { 'Content-Type': 'application/json', 'Retry-After': '1' }).end(body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    replicas.push(server);
  }
  nginx = await TempNginx.start(replicas.map((s) => (s.address() as net.AddressInfo).port));
});
after(async () => {
  await nginx?.stop();
  await Promise.all(replicas.map((s) => new Promise((r) => s.close(r))));
});

const audio = (from?: string) => new Promise<{ status: number; body: string }>((resolve, reject) => {
  const body = '--b\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\nRIFF\r\n--b--\r\n';
  const req = http.request(`${nginx.url}/v1/audio/transcriptions`, {
    method: 'POST', localAddress: from, agent: false,
    headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'multipart/form-data; boundary=b', 'Content-Length': Buffer.byteLength(body) },
  }, (res) => {
    let text = '';
    res.on('data', (d: Buffer) => (text += d));
    res.on('end', () => resolve({ status: res.statusCode!, body: text }));
  });
  req.on('error', reject);
  req.end(body);
});

/**
 * Sends a POST's headers announcing `contentLength` bytes and then nothing:
 * resolves with nginx's status line and body, or 'no answer' after `waitMs`.
 */
function headersOnly(opts: { key?: string; from?: string; contentLength: number; waitMs: number }): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port: nginx.port, localAddress: opts.from });
    let text = '';
    const timer = setTimeout(() => (socket.destroy(), resolve('no answer')), opts.waitMs);
    socket.on('data', (d: Buffer) => {
      text += d;
      if (/\r\n\r\n[\s\S]*\}\n?$/.test(text)) (clearTimeout(timer), socket.destroy(), resolve(text));
    });
    socket.on('error', () => (clearTimeout(timer), resolve(text || 'reset')));
    socket.write(`POST /v1/audio/transcriptions HTTP/1.1\r\nHost: 127.0.0.1\r\n${opts.key ? `Authorization: Bearer ${opts.key}\r\n` : ''}` +
      `Content-Type: multipart/form-data; boundary=b\r\nContent-Length: ${opts.contentLength}\r\n\r\n`);
  });
}

test('nginx drops an idle upstream connection before a replica closes it (no request sent into a closing socket)', () => {
  const conf = readFileSync(path.join(ROOT, 'deploy/nginx.conf'), 'utf8');
  const upstreams = [...conf.matchAll(/upstream (\w+) \{([^}]*)\}/g)];
  assert.ok(upstreams.length >= 1);
  for (const [, name, body] of upstreams) {
    const timeout = /keepalive_timeout (\d+)s;/.exec(body);
    // Without it nginx keeps them 60 s.
    assert.ok(timeout && Number(timeout[1]) * 1000 < KEEP_ALIVE_TIMEOUT_MS, `upstream ${name}: keepalive_timeout ${timeout?.[1] ?? 'unset (60)'} s against Node's ${KEEP_ALIVE_TIMEOUT_MS} ms`);
  }
});

test('a POST without a valid key gets the 401 envelope after its headers, before any of its 26 MB body is sent', async () => {
  const before = seen.get('POST /v1/audio/transcriptions') ?? 0;
  for (const key of [undefined, 'sk-stt-not-a-key']) {
    const answer = await headersOnly({ key, contentLength: 26_000_000, waitMs: 15_000 });
    assert.match(answer, /^HTTP\/1\.1 401 /, answer);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    assert.deepEqual([body.error.type, body.error.code], ['authentication_error', 'invalid_api_key']);
  }
  assert.equal(seen.get('POST /v1/audio/transcriptions') ?? 0, before, 'no replica was sent the upload');
});

test('with every replica\'s queue full, audio gets 503 or 502 but /admin and /ready still answer through nginx', async () => {
  const statuses: number[] = [];
  for (let i = 0; i < 8; i++) statuses.push((await audio()).status);
  assert.ok(statuses.every((s) => s === 503 || s === 502), statuses.join(','));
  assert.ok(statuses.includes(502), `the replicas were marked down for audio: ${statuses}`);
  const admin = await fetch(`${nginx.url}/admin/status`, { headers: { Authorization: 'Bearer admin' } });
  assert.equal(admin.status, 200, 'the admin API is not marked down with the audio');
  assert.equal((await fetch(`${nginx.url}/ready`)).status, 200);
});

test('one address over 32 requests at once gets the 429 envelope; another address is still served', async () => {
  // Keyed uploads that never finish: each holds one of its address's places.
  const held = Array.from({ length: 40 }, () => headersOnly({ key: KEY, from: ABUSER, contentLength: 1_000_000, waitMs: 5_000 }));
  const answers = await Promise.all(held);
  const refused = answers.filter((a) => /^HTTP\/1\.1 429 /.test(a));
  assert.ok(refused.length >= 8, `${refused.length} of 40 refused: ${[...new Set(answers.map((a) => a.split('\r\n')[0]))]}`);
  const body = JSON.parse(refused[0].slice(refused[0].indexOf('\r\n\r\n') + 4));
  assert.deepEqual([body.error.type, body.error.code], ['rate_limit_error', 'too_many_requests']);
  assert.ok(answers.filter((a) => a === 'no answer').length <= 32, 'at most 32 were let in to upload');
  const mine = await audio();
  assert.ok(mine.status === 503 || mine.status === 502, `this address reaches the replicas: ${mine.status}`);
});

test('audio requests from one address beyond 10 a second (a burst of 40) get 429 before the key check', async () => {
  const checksBefore = seen.get('GET /v1/models') ?? 0;
  // 8 at a time, well under the 32 connections an address may hold: what is refused here is the rate.
  const statuses: number[] = [];
  const started = performance.now();
  for (let i = 0; i < 10; i++) statuses.push(...(await Promise.all(Array.from({ length: 8 }, () => audio(ABUSER).then((r) => r.status)))));
  const seconds = (performance.now() - started) / 1000;
  const limited = statuses.filter((s) => s === 429).length;
  // At most the burst (40), one more, and 10 for every second the loop took got through.
  assert.ok(limited >= 80 - 41 - Math.ceil(10 * seconds), `${limited} of 80 limited in ${seconds.toFixed(2)} s: ${statuses}`);
  assert.ok(limited > 0);
  assert.ok((seen.get('GET /v1/models') ?? 0) - checksBefore <= 80 - limited, 'a limited request cost the replicas nothing');
});

test('nginx\'s own errors are in the envelope: an admin body over 64 kB is refused before it is buffered', async () => {
  const answer = await new Promise<string>((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port: nginx.port });
    let text = '';
    socket.on('data', (d: Buffer) => (text += d));
    socket.on('close', () => resolve(text));
    socket.on('error', () => resolve(text));
    socket.write('POST /admin/api-keys HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 26000000\r\n\r\n');
  });
  assert.match(answer, /^HTTP\/1\.1 413 /);
  const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
  assert.deepEqual([body.error.type, body.error.code], ['invalid_request_error', 'body_too_large']);
  assert.equal(seen.get('POST /admin/api-keys') ?? 0, 0);
});
