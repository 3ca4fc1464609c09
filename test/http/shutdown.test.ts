// SIGTERM past STT_SHUTDOWN_TIMEOUT_MS: what is left is aborted and answered,
// the database is closed and the process exits, instead of waiting for a
// long transcription (or one whose client left) to run to its end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { transcribe, wavBlob } from '../helpers/server';
import { speechClip } from '../../fixtures';
import net from 'node:net';
import { prepare, startChild, waitForPort } from '../helpers/child-server';

test('after the shutdown timeout, running and queued jobs are aborted with 503 shutting_down and the process exits 0', { timeout: 120_000 }, async () => {
  const { dataDir, key } = await prepare();
  // Random weights with no token cap: a 300-s clip keeps the job busy for far longer than this test waits.
  const c = startChild({ STT_DATA_DIR: dataDir, STT_THREADS: '2', STT_MAX_TOKENS: '0', STT_SHUTDOWN_TIMEOUT_MS: '300', LOG_LEVEL: 'debug' });
  const port = await waitForPort(c);
  const server = { url: `http://127.0.0.1:${port}` };
  const auth = { Authorization: `Bearer ${key}` };
  const running = transcribe(server, { file: wavBlob(speechClip(300)) }, auth);
  for (let i = 0; i < 1500 && !/"msg":"local job queued"/.test(c.output()); i++) await new Promise((r) => setTimeout(r, 20));
  const queued = transcribe(server, { file: wavBlob(speechClip(200)) }, auth);
  for (let i = 0; i < 1500 && (c.output().match(/"msg":"local job queued"/g) ?? []).length < 2; i++) await new Promise((r) => setTimeout(r, 20));
  c.child.kill('SIGTERM');
  const code = await Promise.race([c.exited, new Promise<'still running'>((r) => setTimeout(() => r('still running'), 30_000))]);
  if (code === 'still running') c.child.kill('SIGKILL');
  assert.equal(code, 0, c.output().slice(-2000));
  for (const res of [await running, await queued]) {
    const body = await res.json();
    assert.equal(res.status, 503, JSON.stringify(body));
    assert.equal(body.error.code, 'shutting_down');
  }
  assert.match(c.output(), /shutdown timeout: aborting the jobs left/);
  assert.match(c.output(), /"msg":"stopped"/);
});

test('SIGINT drains like SIGTERM: new connections are refused at once while the running job finishes and is answered', { timeout: 300_000 }, async () => {
  const { dataDir, key } = await prepare();
  const c = startChild({ STT_DATA_DIR: dataDir, STT_THREADS: '2', STT_SHUTDOWN_TIMEOUT_MS: '600000', LOG_LEVEL: 'debug' });
  const port = await waitForPort(c);
  const auth = { Authorization: `Bearer ${key}` };
  let answered = false;
  // Four windows of tiny Whisper: seconds of work, against the milliseconds the probe below needs.
  const running = transcribe({ url: `http://127.0.0.1:${port}` }, { file: wavBlob(speechClip(120)) }, auth).finally(() => (answered = true));
  for (let i = 0; i < 1500 && !/"msg":"local job queued"/.test(c.output()); i++) await new Promise((r) => setTimeout(r, 20));
  c.child.kill('SIGINT');
  for (let i = 0; i < 1500 && !/shutting down/.test(c.output()); i++) await new Promise((r) => setTimeout(r, 5));
  const refused = await new Promise<string>((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => resolve('connected'));
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
  assert.equal(answered, false, 'the job was still running when the probe was refused');
  assert.equal(refused, 'ECONNREFUSED');
  const res = await running;
  assert.equal(res.status, 200, await res.text());
  assert.equal(await c.exited, 0);
  assert.match(c.output(), /"msg":"stopped"/);
  assert.doesNotMatch(c.output(), /shutdown timeout/);
});
