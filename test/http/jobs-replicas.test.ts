// Jobs across replicas (issue 38's "nothing lost"): two server processes on
// one PostgreSQL (Debian's, in a temporary directory) sharing a spool
// directory. A 30-minute recording is submitted as a job with a callback;
// the replica running it is stopped with SIGTERM in the middle, then the one
// that took it over is killed with SIGKILL in the middle: the job completes
// once, the callback arrives once and verifies, and the answer is the one a
// synchronous request to a single process gives for the same recording.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { freePort, loopedSpeech, TempPostgres, wav16k } from '../../fixtures';
import { installStandInModels, startTestServer, tempDataDir, wavBlob } from '../helpers/server';
import { startChild, waitForPort } from '../helpers/child-server';
import { openDatabase } from '../../src/store/open-database';
import { SettingsStore } from '../../src/store/settings';
import { ApiKeyStore } from '../../src/store/api-keys';

const SECRET = 'ab'.repeat(32);
const RECORDING = wav16k(loopedSpeech(1800));
let pg: TempPostgres;
before(async () => {
  pg = await TempPostgres.create();
});
after(async () => pg?.destroy());

interface Replica {
  url: string;
  proc: ReturnType<typeof startChild>;
}

async function startReplica(databaseUrl: string, spoolDir: string): Promise<Replica> {
  const dataDir = tempDataDir();
  await installStandInModels(dataDir); // the smallest stand-in: this is about jobs, not speech
  const port = await freePort();
  const proc = startChild({
    PORT: String(port), STT_THREADS: '1', STT_DATA_DIR: dataDir, STT_DATABASE_URL: databaseUrl, STT_SECRET_KEY: SECRET,
    STT_CALLBACK_ALLOW_PRIVATE_ADDRESSES: '1', STT_SPOOL_DIR: spoolDir, STT_JOB_LEASE_SECONDS: '3', STT_MAX_JOB_UPLOAD_BYTES: String(64 << 20),
    // Greedy, as the single process the transcript is compared with.
    STT_BEAM_SIZE: '1',
  });
  await waitForPort(proc);
  return { url: `http://127.0.0.1:${port}`, proc };
}

/** Polls the job until `done` says so (bounded: 400 s, several times what the whole job takes here). */
async function waitFor(url: string, key: string, id: string, done: (job: any) => boolean): Promise<any> {
  for (const until = Date.now() + 400_000; Date.now() < until; ) {
    const job = await (await fetch(`${url}/v1/audio/jobs/${id}`, { headers: { Authorization: `Bearer ${key}` } })).json();
    if (done(job)) return job;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`job ${id} never got there`);
}

const midway = (total: number) => (job: any) => job.progress.seconds_done > 0 && job.progress.seconds_done < total;

test('a 30-minute job survives a SIGTERM and a kill -9 of the replicas running it: done once, called back once, the synchronous answer', { timeout: 600_000 }, async (t) => {
  const databaseUrl = await pg.newDatabase();
  const db = await openDatabase({ dataDir: tempDataDir(), databaseUrl });
  await new SettingsStore(db).setRouting({ mode: 'local', localModel: 'whisper-base', cloud: null });
  const { key } = await new ApiKeyStore(db).create('jobs');
  await db.close();
  const spoolDir = mkdtempSync(path.join(os.tmpdir(), 'stt-spool-'));
  const calls: { signature: string; body: string }[] = [];
  const hook = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      calls.push({ signature: String(req.headers['stt-signature']), body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;

  const replicas: Replica[] = [];
  t.after(async () => {
    for (const r of replicas) r.proc.child.kill('SIGKILL');
    hook.close();
  });
  const start = async () => {
    const r = await startReplica(databaseUrl, spoolDir);
    replicas.push(r);
    return r;
  };
  const a = await start();
  const form = new FormData();
  form.append('file', wavBlob(RECORDING), 'meeting.wav');
  form.append('response_format', 'verbose_json');
  form.append('callback_url', hookUrl);
  const submitted = await (await fetch(`${a.url}/v1/audio/jobs`, { method: 'POST', body: form, headers: { Authorization: `Bearer ${key}` } })).json();
  const { id } = submitted;
  assert.equal(submitted.progress.seconds_total, 1800);
  const secret = (await (await fetch(`${a.url}/v1/audio/job-callbacks/secret`, { headers: { Authorization: `Bearer ${key}` } })).json()).secret;
  // A runs it alone; stopped with SIGTERM once it has recorded a checkpoint, it puts the job back in the queue.
  const stopped = await waitFor(a.url, key, id, midway(1800));
  a.proc.child.kill('SIGTERM');
  assert.equal(await a.proc.exited, 0, 'A stopped cleanly');
  const row = await openDatabase({ dataDir: tempDataDir(), databaseUrl });
  assert.deepEqual(await row.get('SELECT status, lease_owner FROM jobs WHERE id = ?', [id]), { status: 'queued', lease_owner: null }, 'A put it back in the queue');
  await row.close();
  // B, started then, takes it from there; killed with SIGKILL once it has recorded a checkpoint of its own.
  const b = await start();
  const further = await waitFor(b.url, key, id, (job) => job.progress.seconds_done > stopped.progress.seconds_done && job.progress.seconds_done < 1800);
  b.proc.child.kill('SIGKILL');
  await b.proc.exited;
  t.diagnostic(`A stopped at ${stopped.progress.seconds_done} s done, B killed at ${further.progress.seconds_done} s; a new A takes over once B's 3-s lease runs out`);
  const a2 = await start();
  const done = await waitFor(a2.url, key, id, (job) => job.status === 'done');
  await waitFor(a2.url, key, id, (job) => job.callback_status === 'delivered');
  await new Promise((r) => setTimeout(r, 1500));
  a2.proc.child.kill('SIGTERM');
  await a2.proc.exited;

  assert.equal(calls.length, 1, 'one callback');
  const { t: sentAt, v1 } = Object.fromEntries(calls[0].signature.split(',').map((p) => p.split('=') as [string, string]));
  assert.equal(v1, createHmac('sha256', secret).update(`${sentAt}.${calls[0].body}`).digest('hex'), 'the callback, sent by another replica than the one asked for the secret, verifies');
  assert.deepEqual(JSON.parse(calls[0].body).result, done.result);
  // The same recording as one synchronous request to a single process gives the same answer.
  const alone = await startTestServer({ routing: { mode: 'local', localModel: 'whisper-base' }, env: { STT_THREADS: '1', STT_BEAM_SIZE: '1', STT_MAX_UPLOAD_BYTES: String(64 << 20) } });
  try {
    const f = new FormData();
    f.append('file', wavBlob(RECORDING), 'meeting.wav');
    f.append('response_format', 'verbose_json');
    const sync = await fetch(`${alone.url}/v1/audio/transcriptions`, { method: 'POST', body: f, headers: alone.auth });
    assert.equal(sync.status, 200);
    assert.deepEqual(done.result, await sync.json());
  } finally {
    await alone.close();
  }
});
