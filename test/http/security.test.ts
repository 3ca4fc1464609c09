// Security: every route in the router's own table is walked in every path
// variant a router might treat as "the same" path, without a key and with the
// wrong kind of key; the Host allow-list; and the smaller holes of the
// security issue that need a running server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { startTestServer, tempDataDir, transcribe, wavBlob, type TestServer } from '../helpers/server';
import { startModelServer, startOpenAiLike, AUDIO_DIR, ROOT, PARAKEET_FIXTURE } from '../../fixtures';
import { createRouter } from '../../src/app';
import { loadConfig } from '../../src/config';

const JFK = readFileSync(path.join(AUDIO_DIR, 'jfk.wav'));

let server: TestServer;
before(async () => {
  server = await startTestServer({ routing: { mode: 'local', localModel: 'whisper-base' } });
});
after(() => server.close());

/** Sends a raw request (fetch would normalise the path and forbids setting Host). */
function raw(method: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers: { Host: `127.0.0.1:${port}`, ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body, headers: res.headers }));
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

test('a generated admin key and a first API key are not printed when stdout is not a terminal; the log names their files', async () => {
  const dataDir = tempDataDir();
  // A new host: the default model's download (from an unreachable mirror) fails in the background.
  const env = { ...process.env, PORT: '0', STT_DATA_DIR: dataDir, STT_ADMIN_KEY: '', LOG_LEVEL: 'info', STT_MODEL_BASE_URL: 'https://127.0.0.1:9/models' };
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/server.ts')], { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  try {
    for (let i = 0; i < 1500 && !out.includes('first API key'); i++) await new Promise((r) => setTimeout(r, 20));
    assert.match(out, /"msg":"listening"/);
    const key = readFileSync(path.join(dataDir, 'admin.key'), 'utf8').trim();
    assert.ok(key.length > 20);
    assert.ok(!out.includes(key), 'the admin key is not on stdout');
    const apiKey = readFileSync(path.join(dataDir, 'first-api.key'), 'utf8').trim();
    assert.ok(apiKey.length > 20 && !out.includes(apiKey), 'nor the first API key');
    assert.equal(statSync(path.join(dataDir, 'first-api.key')).mode & 0o777, 0o600);
    const line = out.split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((l) => /admin key/.test(l.msg));
    assert.equal(line.file, path.join(dataDir, 'admin.key'));
    assert.equal(statSync(path.join(dataDir, 'admin.key')).mode & 0o777, 0o600);
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
});

test('on a terminal the generated admin key and the first API key are printed once, and not again at the next start', async () => {
  const dataDir = tempDataDir();
  const env = { ...process.env, PORT: '0', STT_DATA_DIR: dataDir, STT_ADMIN_KEY: '', LOG_LEVEL: 'info', STT_MODEL_BASE_URL: 'https://127.0.0.1:9/models' };
  // util-linux's script(1) gives the server a pseudo-terminal as stdout.
  const startOnTerminal = async (until: string): Promise<string> => {
    // exec: script(1) runs the command through $SHELL -c, and dash (Debian's sh, or
    // script's default when SHELL is unset) forks instead of replacing itself,
    // which would leave the server a grandchild out of pkill -P's reach.
    const command = `exec ${process.execPath} --import tsx ${path.join(ROOT, 'src/server.ts')}`;
    const child = spawn('script', ['-qfec', command, '/dev/null'], { env, cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      for (let i = 0; i < 1500 && !out.includes(until); i++) await new Promise((r) => setTimeout(r, 20));
      assert.ok(out.includes(until), `"${until}" in: ${out}`);
    } finally {
      // To the server, not to script(1), which would hang up on it instead.
      spawnSync('pkill', ['-TERM', '-P', String(child.pid)]);
      await exited;
    }
    // The signal may land mid-start (the second start is signalled on "listening", before the
    // first-start checks are over): the server must still stop through its handler, not die of it.
    assert.match(out, /shutting down/);
    return out;
  };
  const first = await startOnTerminal('First API key, for /v1');
  const adminKey = readFileSync(path.join(dataDir, 'admin.key'), 'utf8').trim();
  const apiKey = readFileSync(path.join(dataDir, 'first-api.key'), 'utf8').trim();
  assert.equal(first.split(adminKey).length - 1, 1, 'the admin key is printed once');
  assert.equal(first.split(apiKey).length - 1, 1, 'the first API key is printed once');
  assert.match(first, /printed once below/);
  const second = await startOnTerminal('"msg":"listening"');
  assert.ok(!second.includes(adminKey) && !second.includes(apiKey), 'a restart prints neither key');
  assert.equal(readFileSync(path.join(dataDir, 'admin.key'), 'utf8').trim(), adminKey, 'and keeps the admin key');
});

test('provider base URLs: https only (loopback http with the opt-in), never link-local or metadata', async () => {
  const put = (s: TestServer, id: string, baseUrl: string) =>
    fetch(`${s.url}/admin/providers/${id}`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${s.adminKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ kind: 'openai', baseUrl, apiKey: 'k-123456789', enabled: true, models: [{ id: 'm' }] }),
    });
  const refused = ['http://10.0.0.5/v1', 'https://10.0.0.5/v1', 'https://192.168.1.2/v1', 'https://[fd00::1]/v1', 'http://provider.example/v1', 'https://169.254.169.254/latest', 'http://169.254.169.254/',
    'https://[fe80::1]/v1', 'https://[::ffff:169.254.169.254]/v1', 'https://metadata.google.internal/v1', 'ftp://provider.example/',
    'https://user:pass@provider.example/v1', 'not a url'];
  for (const url of refused) {
    const r = await put(server, 'bad', url);
    assert.equal(r.status, 400, url);
    assert.equal((await r.json()).error.param, 'baseUrl');
  }
  assert.equal((await put(server, 'good', 'https://provider.example/v1')).status, 201);
  assert.equal((await put(server, 'loop', 'http://127.0.0.1:9/v1')).status, 201, 'loopback http with the opt-in');
  const strict = await startTestServer({ installModels: false, env: { STT_ALLOW_INSECURE_LOOPBACK: 'false' } });
  try {
    assert.equal((await put(strict, 'loop', 'http://127.0.0.1:9/v1')).status, 400, 'loopback http without the opt-in');
    assert.equal((await put(strict, 'loop', 'https://127.0.0.1:9/v1')).status, 400, 'loopback https without an opt-in');
  } finally {
    await strict.close();
  }
  const lan = await startTestServer({ installModels: false, env: { STT_ALLOW_INSECURE_LOOPBACK: 'false', STT_ALLOW_PRIVATE_ADDRESSES: 'true' } });
  try {
    for (const [i, url] of ['https://127.0.0.1:9/v1', 'https://10.0.0.5/v1', 'https://[fd00::1]/v1'].entries()) assert.equal((await put(lan, `lan${i}`, url)).status, 201, url);
    assert.equal((await put(lan, 'lan', 'http://10.0.0.5/v1')).status, 400, 'still https only');
    assert.equal((await put(lan, 'lan', 'https://169.254.169.254/v1')).status, 400, 'never metadata');
  } finally {
    await lan.close();
  }
});

test('a provider whose name resolves to a loopback or private address is refused where the connection is made: no connection, no key', async () => {
  // "localhost" passes the URL rules (a name, over https); what it resolves to, when the call connects, does not.
  const connections: string[] = [];
  const tcp = http.createServer();
  tcp.on('connection', (socket) => (connections.push(socket.remoteAddress ?? ''), socket.destroy()));
  await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
  const port = (tcp.address() as { port: number }).port;
  const s = await startTestServer({ installModels: false, env: { STT_ALLOW_INSECURE_LOOPBACK: 'false' } });
  const adminPut = (p: string, body: unknown) =>
    fetch(`${s.url}${p}`, { method: 'PUT', headers: { Authorization: `Bearer ${s.adminKey}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  try {
    assert.equal((await adminPut('/admin/providers/p', { kind: 'openai', baseUrl: `https://localhost:${port}/v1`, apiKey: 'sk-provider-123456', enabled: true, models: [{ id: 'whisper-1' }] })).status, 201);
    assert.equal((await adminPut('/admin/routing', { mode: 'cloud', cloud: { providerId: 'p', model: 'whisper-1' } })).status, 200);
    const res = await transcribe(s, { file: wavBlob(JFK) }, s.auth);
    assert.equal(res.status, 502);
    assert.equal((await res.json()).error.code, 'provider_error');
    assert.deepEqual(connections, [], 'nothing connected to the address the name resolved to');
    const status = await (await fetch(`${s.url}/admin/status`, { headers: { Authorization: `Bearer ${s.adminKey}` } })).json();
    assert.match(JSON.stringify(status), /resolves to (127\.0\.0\.1|::1): loopback addresses need STT_ALLOW_PRIVATE_ADDRESSES=true/);
  } finally {
    await s.close();
    await new Promise((r) => tcp.close(r));
  }
});

test('model downloads: https only, on every redirect too', async () => {
  assert.throws(() => loadConfig({ STT_DATA_DIR: tempDataDir(), STT_MODEL_BASE_URL: 'http://mirror.example/models' }), /STT_MODEL_BASE_URL/);
  assert.throws(() => loadConfig({ STT_DATA_DIR: tempDataDir(), STT_MODEL_BASE_URL: 'http://127.0.0.1:1/m' }), /STT_ALLOW_INSECURE_LOOPBACK/);
  assert.doesNotThrow(() => loadConfig({ STT_DATA_DIR: tempDataDir(), STT_MODEL_BASE_URL: 'http://127.0.0.1:1/m', STT_ALLOW_INSECURE_LOOPBACK: 'true' }));

  const models = await startModelServer();
  const dl = await startTestServer({ installModels: false, env: { STT_MODEL_BASE_URL: models.url, STT_ALLOW_UNPINNED_MODELS: 'true' } });
  const settle = async () => {
    for (let i = 0; i < 1000; i++) {
      const res = await fetch(`${dl.url}/admin/local-models`, { headers: { Authorization: `Bearer ${dl.adminKey}` } });
      const e = (await res.json()).data.find((m: { id: string }) => m.id === 'parakeet-tdt-0.6b-v3');
      if (e.download && e.download.state !== 'downloading' && e.download.state !== 'verifying') return e;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.fail('download did not settle');
  };
  try {
    const start = () => fetch(`${dl.url}/admin/local-models/parakeet-tdt-0.6b-v3/download`, { method: 'POST', headers: { Authorization: `Bearer ${dl.adminKey}` } });
    for (const target of ['http://mirror.example/parakeet.bin', 'https://169.254.169.254/parakeet.bin']) {
      models.redirects.set('parakeet-tdt-0.6b-v3-q8_0.bin', target);
      assert.equal((await start()).status, 202);
      const e = await settle();
      assert.equal(e.download.state, 'failed', target);
      assert.match(e.download.error, /refused to fetch/);
      assert.equal(e.installed, false);
    }
    // A redirect to another loopback path (allowed by the opt-in) is followed.
    models.files.set('mirror/parakeet.bin', readFileSync(PARAKEET_FIXTURE));
    models.redirects.set('parakeet-tdt-0.6b-v3-q8_0.bin', `${models.url}/mirror/parakeet.bin`);
    assert.equal((await start()).status, 202);
    const e = await settle();
    assert.equal(e.download.state, 'done', e.download.error);
  } finally {
    await dl.close();
    await models.close();
  }
});

test('cloud calls are bounded: past STT_PROVIDER_CONCURRENCY a request gets 503 queue_full, and no PCM is kept for them', async () => {
  const provider = await startOpenAiLike('sk-provider-123456');
  const s = await startTestServer({ installModels: false, env: { STT_PROVIDER_CONCURRENCY: '1', STT_PROVIDER_TIMEOUT_BASE_MS: '20000' } });
  const adminPut = (p: string, body: unknown) =>
    fetch(`${s.url}${p}`, { method: 'PUT', headers: { Authorization: `Bearer ${s.adminKey}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  try {
    assert.equal((await adminPut('/admin/providers/p', { kind: 'openai', baseUrl: provider.url, apiKey: 'sk-provider-123456', enabled: true, models: [{ id: 'whisper-1' }] })).status, 201);
    assert.equal((await adminPut('/admin/routing', { mode: 'cloud', cloud: { providerId: 'p', model: 'whisper-1' } })).status, 200);
    const seen: (Float32Array | null)[] = [];
    const original = s.services.stt.transcribe.bind(s.services.stt);
    s.services.stt.transcribe = (input) => {
      seen.push(input.pcm);
      return original(input);
    };
    provider.behaviour = 'slow'; // answers after 3 s
    const first = transcribe(s, { file: wavBlob(JFK) }, s.auth);
    for (let i = 0; i < 500 && provider.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(provider.requests.length, 1, 'the first call reached the provider');
    const second = await transcribe(s, { file: wavBlob(JFK) }, s.auth);
    assert.equal(second.status, 503);
    assert.equal((await second.json()).error.code, 'queue_full');
    assert.ok(Number(second.headers.get('retry-after')) >= 1);
    assert.equal((await first).status, 200);
    provider.behaviour = 'ok';
    assert.equal((await transcribe(s, { file: wavBlob(JFK) }, s.auth)).status, 200, 'the slot is free again');
    assert.equal(provider.requests.length, 2);
    // The refused one never got that far: a busy provider is refused before the upload is decoded.
    assert.deepEqual(seen, [null, null], 'the route passed no PCM for a provider call');
  } finally {
    await s.close();
    await provider.close();
  }
});

test('a provider moved to another base URL or kind loses its stored key unless a new one comes with it', async () => {
  const provider = await startOpenAiLike('sk-new-destination-123');
  const put = (body: unknown) =>
    fetch(`${server.url}/admin/providers/mover`, {
      method: 'PUT', headers: { Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: await r.json() }));
  try {
    let r = await put({ kind: 'openai', baseUrl: 'https://provider.example/v1', apiKey: 'sk-old-destination-456', enabled: true, models: [{ id: 'whisper-1' }] });
    assert.equal(r.body.apiKeySet, true);
    r = await put({ name: 'renamed' });
    assert.equal(r.body.apiKeySet, true, 'other changes keep the key');
    r = await put({ baseUrl: provider.url });
    assert.equal(r.status, 200);
    assert.equal(r.body.apiKeySet, false, 'a new base URL clears the key');
    assert.equal(await server.services.providers.apiKey('mover'), null);
    r = await put({ baseUrl: 'https://provider.example/v1', apiKey: 'sk-old-destination-456' });
    assert.equal(r.body.apiKeySet, true, 'a new key in the same request is kept');
    r = await put({ kind: 'deepgram' });
    assert.equal(r.body.apiKeySet, false, 'a new kind clears the key');

    // In use by the cloud route: moving it without a key is refused, with a key it works.
    await put({ kind: 'openai', baseUrl: provider.url, apiKey: 'sk-new-destination-123' });
    const routing = await fetch(`${server.url}/admin/routing`, {
      method: 'PUT', headers: { Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ mode: 'cloud', cloud: { providerId: 'mover', model: 'whisper-1' } }),
    });
    assert.equal(routing.status, 200);
    r = await put({ baseUrl: 'https://elsewhere.example/v1' });
    assert.equal(r.status, 409);
    assert.equal(r.body.error.code, 'provider_in_use');
    assert.equal((await transcribe(server, { file: wavBlob(JFK) }, server.auth)).status, 200);
    assert.ok(provider.requests.every((q) => q.auth === 'Bearer sk-new-destination-123'), 'only the new key reached the new destination');
  } finally {
    await fetch(`${server.url}/admin/routing`, {
      method: 'PUT', headers: { Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ mode: 'local' }),
    });
    await provider.close();
  }
});

test('every guarded route runs its guard first; unknown methods get a 501 envelope, or 405 on a path that exists', async () => {
  const router = createRouter(server.services);
  for (const layer of router.stack.filter((l) => l.methods.length > 0)) {
    const p = String(layer.path);
    const want = p.startsWith('/admin') ? 'authenticateAdmin' : p.startsWith('/v1') ? 'authenticateApiKey' : null;
    if (want) assert.equal((layer.stack[0] as { name?: string }).name, want, `${layer.methods} ${p}`);
  }
  const r = await raw('PROPFIND', '/');
  assert.equal(r.status, 501);
  assert.equal(JSON.parse(r.body).error.code, 'not_implemented');
  // On a path that exists, a method the router has no name for is one the resource does not allow (schemathesis ST204).
  for (const method of ['TRACE', 'PROPFIND']) {
    const onHealth = await raw(method, '/health');
    assert.equal(onHealth.status, 405, method);
    assert.equal(JSON.parse(onHealth.body).error.code, 'method_not_allowed');
    assert.match(onHealth.headers.allow ?? '', /GET/);
  }
});
