// What survives a restart, and graceful shutdown of a real process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startTestServer, tempDataDir, installStandInModels, transcribe, wavBlob } from '../helpers/server';
import { AUDIO_DIR, ROOT, speechClip } from '../../fixtures';

const JFK = readFileSync(path.join(AUDIO_DIR, 'jfk.wav'));
const BOUNDARY = 'lifecycle-test-boundary';
const multipartType = `multipart/form-data; boundary=${BOUNDARY}`;
/** A multipart body with a fixed boundary, so it can be sent by hand in parts. */
function multipart(fields: { file: Blob }): Blob {
  return new Blob([`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`,
    fields.file, `\r\n--${BOUNDARY}--\r\n`]);
}

test('a restart keeps serviceId, API keys and the active runtime', async () => {
  const dataDir = tempDataDir();
  const first = await startTestServer({ dataDir, routing: { mode: 'local', localModel: 'parakeet-tdt-0.6b-v3' } });
  const health1 = await (await fetch(`${first.url}/health`)).json();
  const revoked = await first.services.apiKeys.create('revoked');
  await first.services.apiKeys.revoke(revoked.id);
  await first.close();

  const second = await startTestServer({ dataDir, createKey: false });
  try {
    const health2 = await (await fetch(`${second.url}/health`)).json();
    assert.equal(health2.serviceId, health1.serviceId);
    assert.deepEqual(second.services.local.status(), { activeModel: 'parakeet-tdt-0.6b-v3', state: 'ready', error: null, crashedLoad: null });
    const ok = await transcribe(second, { file: wavBlob(JFK) }, first.auth);
    assert.equal(ok.status, 200, 'the key created before the restart still works');
    assert.equal((await transcribe(second, { file: wavBlob(JFK) }, { Authorization: `Bearer ${revoked.key}` })).status, 401);
  } finally {
    await second.close();
  }
});

test('SIGTERM stops accepting, finishes in-flight work and exits 0', async () => {
  const dataDir = tempDataDir();
  await installStandInModels(dataDir, 'tiny-f16');
  const env = {
    ...process.env, PORT: '0', STT_DATA_DIR: dataDir, STT_ADMIN_KEY: 'test-admin-key-0123456789', STT_THREADS: '2',
    STT_MAX_TOKENS: '16', STT_TEMPERATURE_FALLBACK: 'false', LOG_LEVEL: 'debug',
  };
  const admin = (args: string[]) =>
    new Promise<string>((resolve, reject) => {
      const p = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/cli/admin.ts'), ...args], { env, cwd: ROOT });
      let out = '';
      p.stdout.on('data', (d) => (out += d));
      p.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`admin ${args.join(' ')} exited ${code}`))));
    });
  await admin(['runtime', 'activate', 'whisper-base']);
  const { key } = JSON.parse(await admin(['keys', 'create', 'ci']));

  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/server.ts')], { env, cwd: ROOT });
  const lines: Record<string, unknown>[] = [];
  let buffered = '';
  child.stdout.on('data', (d) => {
    buffered += d;
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      try { lines.push(JSON.parse(line)); } catch { /* banner lines */ }
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const waitFor = async (msg: string) => {
    for (let i = 0; i < 1500 && !lines.some((l) => l.msg === msg); i++) await new Promise((r) => setTimeout(r, 20));
    const found = lines.find((l) => l.msg === msg);
    assert.ok(found, `log line "${msg}"`);
    return found;
  };
  const { port } = (await waitFor('listening')) as { port: number };
  await waitFor('local runtime ready');
  const url = `http://127.0.0.1:${port}`;
  // The gate: the request's headers are in (the server answered 100 Continue)
  // and its body is held until the server is shutting down, so the request is
  // surely in flight at SIGTERM and its work starts only after it, well inside
  // the default shutdown timeout, however loaded the machine.
  const body = await new Response(multipart({ file: wavBlob(speechClip(20)) })).arrayBuffer().then((b) => Buffer.from(b));
  const req = http.request(`${url}/v1/audio/transcriptions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': multipartType, 'Content-Length': body.length, Expect: '100-continue' },
  });
  const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
    req.on('response', async (res) => {
      let text = '';
      for await (const chunk of res) text += chunk;
      resolve({ status: res.statusCode!, text });
    }).on('error', reject);
  });
  await new Promise((resolve) => req.once('continue', resolve));
  child.kill('SIGTERM');
  await waitFor('shutting down: no new connections, finishing in-flight work');
  req.end(body);
  const res = await answered;
  assert.equal(res.status, 200, `in-flight request finished: ${res.text}`);
  assert.equal(await exited, 0);
  await assert.rejects(fetch(`${url}/health`), 'no longer accepting');
  assert.ok(lines.some((l) => l.msg === 'stopped'));
  const requestLine = lines.find((l) => l.msg === 'request' && l.path === '/v1/audio/transcriptions')!;
  const shuttingDown = lines.findIndex((l) => String(l.msg).startsWith('shutting down'));
  assert.ok(shuttingDown >= 0 && shuttingDown < lines.indexOf(requestLine), 'the request was still in flight when SIGTERM came');
  assert.equal(requestLine.status, 200);
  assert.equal(requestLine.audioSeconds, 20);
  assert.equal(requestLine.runtime, 'whisper-base');
  for (const part of ['decodeMs', 'queueMs', 'sttMs']) assert.equal(typeof requestLine[part], 'number', `${part} is logged`);
  const [duration, queue, stt] = (['durationMs', 'queueMs', 'sttMs'] as const).map((k) => requestLine[k] as number);
  assert.ok(stt <= duration && queue <= stt, 'the parts fit inside the whole');
  const { threads, decoderThreads } = requestLine as { threads?: number; decoderThreads?: number };
  assert.ok(Number.isInteger(threads) && threads! >= 1, `the job's threads are logged: ${threads}`);
  assert.ok(Number.isInteger(decoderThreads) && decoderThreads! >= 1 && decoderThreads! <= threads!, `the decoder's threads are logged, within the job's: ${decoderThreads}`);
  // The engine's own line, which every caller (jobs, realtime, Wyoming too) passes, names the same cores.
  const started = lines.find((l) => l.msg === 'local job started');
  assert.ok(started, 'the engine logs each local job as it starts');
  assert.deepEqual([started.threads, started.decoderThreads, started.runtime], [threads, decoderThreads, 'whisper-base']);
  assert.doesNotMatch(JSON.stringify(lines), new RegExp(key.slice(10)), 'the key never reaches the log');
});
