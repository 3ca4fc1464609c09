// The admin CLI (npm run admin) against the data dir of a running server: key
// changes apply to the next request, routing changes within the server's
// routing poll, and every misuse exits non-zero with a message.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { prepare, startChild, waitForPort } from '../helpers/child-server';
import { readdirSync } from 'node:fs';
import { loopedSpeech, ROOT, wav16k } from '../../fixtures';

const ADMIN_KEY = 'test-admin-key-0123456789';
let dataDir: string;
let child: ReturnType<typeof startChild>;
let url: string;

before(async () => {
  ({ dataDir } = await prepare());
  child = startChild({ STT_DATA_DIR: dataDir, STT_THREADS: '2' });
  url = `http://127.0.0.1:${await waitForPort(child)}`;
});
after(async () => {
  child.child.kill('SIGTERM');
  await child.exited;
});

function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/cli/admin.ts'), ...args], {
      cwd: ROOT,
      env: { ...process.env, STT_DATA_DIR: dataDir, STT_ADMIN_KEY: ADMIN_KEY },
    });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    p.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
const json = async (...args: string[]) => {
  const r = await cli(...args);
  assert.equal(r.code, 0, `admin ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout);
};
const models = (key: string) => fetch(`${url}/v1/models`, { headers: { Authorization: `Bearer ${key}` } }).then((r) => r.status);
const status = () => fetch(`${url}/admin/status`, { headers: { Authorization: `Bearer ${ADMIN_KEY}` } }).then((r) => r.json());

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  // The routing poll is 2 s: ten times that.
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`${what}: not seen within 20 s`);
}

test('keys: one created by the CLI works at once on the running server, is listed, and stops working when revoked', async () => {
  const created = await json('keys', 'create', 'from-cli');
  assert.match(created.key, /^sk-stt-/);
  assert.equal(await models(created.key), 200);
  const listed = await json('keys', 'list');
  assert.deepEqual(listed.filter((k: { id: string }) => k.id === created.id).map((k: { name: string }) => k.name), ['from-cli']);
  assert.ok(!JSON.stringify(listed).includes(created.key), 'the key is printed once, at creation');
  const revoked = await json('keys', 'revoke', created.id);
  assert.ok(revoked.revokedAt);
  assert.equal(await models(created.key), 401);
  const missing = await cli('keys', 'revoke', 'no-such-id');
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /no API key with id no-such-id/);
});

test('keys limits: set by the CLI, enforced by the running server on the next request; bad values refused with the API\'s rule', async () => {
  const { id, key } = await json('keys', 'create', 'limited');
  const limited = await json('keys', 'limits', id, '--rpm', '1', '--audio-per-day', '3600', '--local-only', 'yes');
  assert.deepEqual([limited.requestsPerMinute, limited.audioSecondsPerDay, limited.localOnly], [1, 3600, true]);
  const send = () => {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(8)]), 'x.wav');
    return fetch(`${url}/v1/audio/transcriptions`, { method: 'POST', body: form, headers: { Authorization: `Bearer ${key}` } });
  };
  assert.equal((await send()).status, 400, 'the first request of the minute gets through (and is refused as no WAV)');
  const second = await send();
  assert.equal(second.status, 429);
  assert.equal(second.headers.get('x-ratelimit-limit-requests'), '1');
  assert.deepEqual((await json('keys', 'limits', id, '--rpm', 'none')).requestsPerMinute, null);
  assert.equal((await send()).status, 400, 'no request limit any more');
  for (const args of [['--rpm', '0'], ['--rpm', 'lots'], ['--local-only', 'maybe'], ['--burst', '3']]) {
    const r = await cli('keys', 'limits', id, ...args);
    assert.equal(r.code, 1, args.join(' '));
    assert.match(r.stderr, /invalid limits|Unknown option/, args.join(' '));
  }
  assert.match((await cli('keys', 'limits', 'no-such-id', '--rpm', '5')).stderr, /no API key with id no-such-id/);
});

test('runtime: deactivate and activate reach the running server within its routing poll', async () => {
  const listed = await json('runtime', 'list');
  assert.deepEqual(listed.find((r: { id: string }) => r.id === 'whisper-base'), {
    id: 'whisper-base', family: 'whisper', installed: true, file: 'ggml-base.bin', bytes: listed.find((r: { id: string }) => r.id === 'whisper-base').bytes, active: true,
  });
  assert.equal((await json('runtime', 'deactivate')).localModel, null);
  await until('the server let the runtime go', async () => (await status()).local.activeModel === null);
  assert.equal((await json('runtime', 'activate', 'whisper-base')).localModel, 'whisper-base');
  await until('the server loaded the runtime again', async () => {
    const local = (await status()).local;
    return local.activeModel === 'whisper-base' && local.state === 'ready';
  });
  const unknown = await cli('runtime', 'activate', 'whisper-huge');
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /Unknown local runtime "whisper-huge"; known: /, 'the admin API\'s rule and message');
});

test('aliases: set by the CLI, accepted by the running server within its routing poll; an invalid one is refused with the API\'s rule', async () => {
  const firstKey = (await json('keys', 'create', 'alias-test')).key;
  const listedIds = async () => (await (await fetch(`${url}/v1/models`, { headers: { Authorization: `Bearer ${firstKey}` } })).json()).data.map((m: { id: string }) => m.id);
  assert.deepEqual((await json('aliases', 'set', 'whisper-1')).aliases, ['whisper-1']);
  await until('the server lists the alias', async () => (await listedIds()).includes('whisper-1'));
  const bad = await cli('aliases', 'set', 'service-local-stt');
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /Aliases must be unique and not "service-local-stt"/);
  assert.deepEqual((await json('aliases', 'set')).aliases, [], 'no names clears them');
  await until('the server dropped the alias', async () => !(await listedIds()).includes('whisper-1'));
});

test('jobs: listed with every key\'s, and cancelled by the CLI: the running server stops it and its recording is removed', async () => {
  const key = (await json('keys', 'create', 'jobs')).key;
  const form = new FormData();
  form.append('file', new Blob([wav16k(loopedSpeech(1800)) as unknown as BlobPart]), 'long.wav');
  const res = await fetch(`${url}/v1/audio/jobs`, { method: 'POST', body: form, headers: { Authorization: `Bearer ${key}` } });
  const { id } = await res.json();
  assert.equal(res.status, 202);
  const listed = (await json('jobs', 'list')).find((j: { id: string }) => j.id === id);
  assert.ok(listed && ['queued', 'running'].includes(listed.status), JSON.stringify(listed));
  assert.equal(listed.secondsTotal, 1800);
  // the same summary GET /admin/jobs gives (src/jobs/view.ts)
  assert.deepEqual(Object.keys(listed).sort(), ['callbackStatus', 'createdAt', 'errorCode', 'finishedAt', 'id', 'keyId', 'secondsDone', 'secondsTotal', 'status']);
  assert.deepEqual(await json('jobs', 'cancel', id), { id, status: 'cancelled' });
  assert.deepEqual(readdirSync(path.join(dataDir, 'spool')), []);
  const job = await (await fetch(`${url}/v1/audio/jobs/${id}`, { headers: { Authorization: `Bearer ${key}` } })).json();
  assert.equal(job.status, 'cancelled');
  const again = await cli('jobs', 'cancel', id);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /no job .* that has not ended/);
});

test('status matches the running server; a wrong command prints the usage and exits 2', async () => {
  const s = await json('status');
  const health = await (await fetch(`${url}/health`)).json();
  assert.equal(s.serviceId, health.serviceId);
  assert.equal(s.dataDir, dataDir);
  assert.equal(s.apiKeys, (await json('keys', 'list')).length);
  for (const args of [[], ['keys'], ['keys', 'create'], ['bogus', 'thing']]) {
    const r = await cli(...args);
    assert.equal(r.code, 2, `admin ${args.join(' ')}`);
    assert.match(r.stderr, /^usage: npm run admin -- <command>/);
  }
});
