// Security: every route in the router's own table is walked in every path
// variant a router might treat as "the same" path, without a key and with the
// wrong kind of key; the Host allow-list; and the smaller holes of the
// security issue that need a running server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startTestServer, type TestServer } from '../helpers/server';
import { createRouter } from '../../src/http/app';

let server: TestServer;
before(async () => {
  server = await startTestServer({ routing: { mode: 'local', localModel: 'whisper-base' } });
});
after(() => server.close());

/** Sends a raw request (fetch would normalise the path and forbids setting Host). */
function raw(method: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers: { Host: `127.0.0.1:${port}`, ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const upperFirst = (seg: string) => (seg ? seg[0].toUpperCase() + seg.slice(1) : seg);
const percentFirst = (seg: string) => (seg ? `%${seg.charCodeAt(0).toString(16)}${seg.slice(1)}` : seg);

/** The exact path and the variants: case, trailing slash, doubled slash, percent-encoded letters. */
function variants(p: string): string[] {
  const segs = p.split('/');
  return [
    p,
    p.toUpperCase(),
    segs.map(upperFirst).join('/'),
    `/${upperFirst(segs[1])}/${segs.slice(2).join('/')}`,
    `${p}/`,
    `${p.toUpperCase()}/`,
    `/${p}`,
    p.replace(/^\/(\w+)\//, '/$1//'),
    segs.map(percentFirst).join('/'),
    `/${percentFirst(segs[1])}/${segs.slice(2).join('/')}`,
  ];
}

function guardedRoutes(prefix: string): { methods: string[]; path: string }[] {
  const router = createRouter(server.services);
  const routes = router.stack
    .filter((l) => String(l.path).startsWith(prefix) && l.methods.length > 0)
    .map((l) => ({ methods: l.methods, path: String(l.path).replace(/:(\w+)/g, 'whisper-base') }));
  return routes;
}

async function walk(prefix: string, keys: Record<string, string | null>): Promise<number> {
  const routes = guardedRoutes(prefix);
  assert.ok(routes.length >= 2, `the router has ${prefix} routes`);
  let sent = 0;
  for (const route of routes) {
    for (const p of variants(route.path)) {
      for (const method of new Set([...route.methods, 'HEAD', 'OPTIONS'])) {
        for (const [label, key] of Object.entries(keys)) {
          const r = await raw(method, p, key ? { Authorization: `Bearer ${key}` } : {});
          sent++;
          const ok = [401, 403, 404].includes(r.status) || (r.status === 405 && !route.methods.includes(method));
          assert.ok(ok, `${method} ${p} (${label}) answered ${r.status}: ${r.body.slice(0, 200)}`);
        }
      }
    }
  }
  return sent;
}

test('admin routes: no variant of any path reaches a handler without the admin key', async () => {
  const sent = await walk('/admin', { 'no key': null, 'an API key': server.apiKey, 'a wrong key': 'sk-admin-wrong' });
  assert.ok(sent > 300);
  // The walk proves nothing if the guard never lets anything through: the exact paths work with the key.
  const ok = await raw('GET', '/admin/status', { Authorization: `Bearer ${server.adminKey}` });
  assert.equal(ok.status, 200);
  const options = await raw('OPTIONS', '/admin/api-keys', { Authorization: `Bearer ${server.adminKey}` });
  assert.equal(options.status, 200);
  // Nothing was created by any of the requests above.
  const keys = JSON.parse((await raw('GET', '/admin/api-keys', { Authorization: `Bearer ${server.adminKey}` })).body);
  assert.deepEqual(keys.data.map((k: { name: string }) => k.name), ['test']);
});

test('/v1 routes: no variant of any path reaches a handler without an API key', async () => {
  await walk('/v1', { 'no key': null, 'the admin key': server.adminKey });
  const ok = await raw('GET', '/v1/models', { Authorization: `Bearer ${server.apiKey}` });
  assert.equal(ok.status, 200);
});

test('a Host the server was not told about is refused (DNS rebinding)', async () => {
  const auth = { Authorization: `Bearer ${server.adminKey}` };
  for (const host of ['evil.example', 'evil.example:8080', '127.0.0.1.nip.io', 'localhost.evil.example']) {
    const r = await raw('GET', '/admin/status', { ...auth, Host: host });
    assert.equal(r.status, 403, `Host "${host}"`);
    assert.equal(JSON.parse(r.body).error.code, 'host_not_allowed');
  }
  const { port } = new URL(server.url);
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'LOCALHOST', `[::1]:${port}`, '127.0.0.1']) {
    const r = await raw('GET', '/health', { Host: host });
    assert.equal(r.status, 200, `Host "${host}"`);
  }
});

test('STT_ALLOWED_HOSTS replaces the default list; "*" turns the check off', async () => {
  const named = await startTestServer({ installModels: false, env: { STT_ALLOWED_HOSTS: 'stt.example.com,.internal.example' } });
  const any = await startTestServer({ installModels: false, env: { STT_ALLOWED_HOSTS: '*' } });
  try {
    const get = (s: TestServer, host: string) =>
      new Promise<number>((resolve, reject) => {
        const { port } = new URL(s.url);
        http.get({ host: '127.0.0.1', port, path: '/health', headers: { Host: host } }, (res) => {
          res.resume();
          resolve(res.statusCode!);
        }).on('error', reject);
      });
    assert.equal(await get(named, 'stt.example.com'), 200);
    assert.equal(await get(named, 'a.internal.example:443'), 200);
    assert.equal(await get(named, 'internal.example'), 200);
    assert.equal(await get(named, 'xinternal.example'), 403);
    assert.equal(await get(named, '127.0.0.1'), 403);
    assert.equal(await get(any, 'anything.example'), 200);
  } finally {
    await Promise.all([named.close(), any.close()]);
  }
});
