// libuv's pool and the slots: the server sizes the pool for its slots and
// paused jobs at start, refuses a pool set too small, and a burst of long and
// short clips on four slots finishes (four long jobs paused before their
// native work began used to hold every pool thread while the short ones
// waited for one).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { tempDataDir, installModels, transcribe, wavBlob } from '../helpers/server';
import { ROOT } from '../helpers/paths';
import { speechClip } from '../helpers/clips';
import { Database } from '../../src/store/db';
import { SettingsStore } from '../../src/store/settings';
import { ApiKeyStore } from '../../src/store/api-keys';

async function prepare(): Promise<{ dataDir: string; key: string }> {
  const dataDir = tempDataDir();
  await installModels(dataDir, 'tiny-f16');
  const db = await Database.open(dataDir);
  await new SettingsStore(db).setRouting({ mode: 'local', localModel: 'whisper-base', cloud: null });
  const { key } = await new ApiKeyStore(db).create('pool');
  await db.close();
  return { dataDir, key };
}

function startChild(env: Record<string, string>) {
  const { UV_THREADPOOL_SIZE: _drop, ...inherited } = process.env;
  void _drop;
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/server.ts')], {
    cwd: ROOT,
    env: { ...inherited, PORT: '0', STT_ADMIN_KEY: 'test-admin-key-0123456789', STT_MAX_TOKENS: '16', STT_TEMPERATURE_FALLBACK: 'false', STT_DEFAULT_MODEL: 'none', ...env },
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { child, exited, output: () => out };
}

test('a pool set too small for the slots is refused at start, naming both numbers', async () => {
  const { dataDir } = await prepare();
  const c = startChild({ STT_DATA_DIR: dataDir, STT_THREADS: '4', STT_PARALLEL: '4', UV_THREADPOOL_SIZE: '4' });
  assert.equal(await c.exited, 2);
  assert.match(c.output(), /STT_PARALLEL: 4 slots need a libuv pool of at least 6 threads .* UV_THREADPOOL_SIZE is 4/);
});

test('four slots: the pool is sized at start, and 4 long + 4 short clips at once all finish', { timeout: 180_000 }, async () => {
  const { dataDir, key } = await prepare();
  const c = startChild({ STT_DATA_DIR: dataDir, STT_THREADS: '4', STT_PARALLEL: '4', LOG_LEVEL: 'info' });
  try {
    let port = 0;
    for (let i = 0; i < 1500 && !(port && /local runtime ready/.test(c.output())); i++) {
      port = Number(/"port":(\d+)/.exec(c.output())?.[1] ?? 0);
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(port, c.output());
    const server = { url: `http://127.0.0.1:${port}` };
    const auth = { Authorization: `Bearer ${key}` };
    const long = wavBlob(speechClip(60));
    const short = wavBlob(speechClip(5));
    const all = [...Array(4)].map(() => transcribe(server, { file: long }, auth)).concat([...Array(4)].map(() => transcribe(server, { file: short }, auth)));
    const statuses = await Promise.all(all.map((p) => p.then((r) => r.status)));
    assert.deepEqual(statuses, Array(8).fill(200));
    // An authenticated request is answered afterwards: the pool is not held by paused jobs.
    assert.equal((await fetch(`${server.url}/v1/models`, { headers: auth })).status, 200);
  } finally {
    c.child.kill('SIGTERM');
    await c.exited;
  }
});
