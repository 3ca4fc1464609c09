// libuv's pool and the slots: the server sizes the pool for its slots and
// paused jobs at start, refuses a pool set too small, and a burst of long and
// short clips on four slots finishes (four long jobs paused before their
// native work began used to hold every pool thread while the short ones
// waited for one).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { transcribe, wavBlob } from '../helpers/server';
import { speechClip } from '../../fixtures';
import { prepare, startChild, waitForPort } from '../helpers/child-server';

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
    const port = await waitForPort(c);
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
