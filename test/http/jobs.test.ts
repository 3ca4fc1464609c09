// The jobs API (issue 38) on a generated model: submit, poll, fetch the
// answer (the same as the synchronous one, for a long recording too, and
// after the job was stopped part-way and resumed from its checkpoint), key
// scoping, cancel and removal with the spool emptied, the limits, callbacks.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startTestServer, tempDataDir, transcribe, wavBlob, type TestServer } from '../helpers/server';
import { freeBytes } from '../../src/jobs/spool-space';
import { AUDIO_DIR, loopedSpeech, wav16k, writeWav } from '../../fixtures';
import type { LocalRequest } from '../../src/stt/local/engine';

const JFK = readFileSync(path.join(AUDIO_DIR, 'jfk.wav'));
const MiB = 1024 * 1024;
let server: TestServer;

before(async () => {
  server = await startTestServer({ routing: { mode: 'local', localModel: 'whisper-base' }, env: { STT_MAX_JOB_UPLOAD_BYTES: '12000000', STT_MAX_JOBS_PER_KEY: '3', STT_MAX_JOB_AUDIO_SECONDS: '600', STT_CALLBACK_ALLOW_PRIVATE_ADDRESSES: 'true' } });
});
after(async () => {
  await server.close();
});

function submit(s: { url: string }, auth: Record<string, string>, fields: Record<string, string | Blob>): Promise<Response> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) {
    if (v instanceof Blob) form.append(k, v, 'meeting.wav');
    else form.append(k, v);
  }
  return fetch(`${s.url}/v1/audio/jobs`, { method: 'POST', body: form, headers: auth });
}

async function getJob(s: { url: string }, auth: Record<string, string>, id: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${s.url}/v1/audio/jobs/${id}`, { headers: auth });
  return { status: res.status, body: await res.json() };
}

/** Polls until the job has ended (bounded: the generated model takes well under a second a piece). */
async function ended(s: { url: string }, auth: Record<string, string>, id: string): Promise<any> {
  for (let i = 0; i < 600; i++) {
    const { body } = await getJob(s, auth, id);
    if (!['queued', 'running'].includes(body.status)) return body;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`job ${id} did not end`);
}

const spoolFiles = (s: TestServer) => readdirSync(path.join(s.dataDir, 'spool'));

/** Holds the local scheduler's one slot with a request until the returned function is called. */
function holdSlot(s: TestServer): () => Promise<void> {
  let release!: () => void;
  const held = s.services.local.scheduler.submit(1, undefined, () => new Promise<void>((r) => (release = r)));
  return async () => {
    release();
    await held;
  };
}

test('a job is accepted at once, runs, and answers what the synchronous request answers, in its format', async () => {
  for (const format of ['json', 'verbose_json', 'srt']) {
    const res = await submit(server, server.auth, { file: wavBlob(JFK), response_format: format });
    const accepted = await res.json();
    assert.equal(res.status, 202, JSON.stringify(accepted));
    assert.match(accepted.id, /^job_[0-9a-f]{32}$/);
    assert.equal(res.headers.get('location'), `/v1/audio/jobs/${accepted.id}`);
    assert.deepEqual([accepted.object, accepted.response_format, accepted.progress.seconds_total], ['audio.job', format, 11]);
    const done = await ended(server, server.auth, accepted.id);
    assert.equal(done.status, 'done', JSON.stringify(done));
    assert.deepEqual(done.progress, { seconds_done: 11, seconds_total: 11 });
    assert.ok(done.finished_at >= done.created_at);
    const sync = await transcribe(server, { file: wavBlob(JFK), response_format: format }, server.auth);
    assert.deepEqual(done.result, format === 'srt' ? await sync.text() : await sync.json(), format);
  }
  assert.deepEqual(spoolFiles(server), [], 'a finished job\'s recording is removed');
});

/** The verbose_json answer of a synchronous request for `wav`, with word times. */
async function synchronous(s: TestServer, wav: Buffer): Promise<unknown> {
  const res = await transcribe(s, { file: wavBlob(wav), response_format: 'verbose_json', 'timestamp_granularities[]': 'word' }, s.auth);
  assert.equal(res.status, 200);
  return res.json();
}

test('a long recording\'s job answers exactly what one synchronous request answers, with its progress recorded as it runs', async () => {
  const wav = wav16k(loopedSpeech(330));
  const res = await submit(server, server.auth, { file: wavBlob(wav), response_format: 'verbose_json', 'timestamp_granularities[]': 'word' });
  assert.equal(res.status, 202);
  const id = (await res.json()).id;
  const seen = new Set<number>();
  let job;
  do {
    job = (await getJob(server, server.auth, id)).body;
    seen.add(job.progress.seconds_done);
    await new Promise((r) => setTimeout(r, 20));
  } while (['queued', 'running'].includes(job.status));
  assert.equal(job.status, 'done', JSON.stringify(job.error));
  assert.ok([...seen].some((t) => t > 0 && t < 330), `progress between the start and the end: ${[...seen]}`);
  assert.deepEqual(job.result, await synchronous(server, wav));
  assert.ok(job.result.words.at(-1).end > 300, 'the whole recording, word by word');
});

test('the jobs show in /metrics and /admin/status', async () => {
  const release = holdSlot(server);
  const { id } = await (await submit(server, server.auth, { file: wavBlob(JFK) })).json();
  const admin = { Authorization: `Bearer ${server.adminKey}` };
  const status = await (await fetch(`${server.url}/admin/status`, { headers: admin })).json();
  assert.equal(status.jobs.queued + status.jobs.running, 1, JSON.stringify(status.jobs));
  const metrics = await (await fetch(`${server.url}/metrics`, { headers: admin })).text();
  assert.match(metrics, /^stt_batch_jobs\{status="running"\} 1$/m);
  assert.match(metrics, /^stt_batch_job_oldest_queued_seconds 0$/m);
  await release();
  await ended(server, server.auth, id);
  const after = await (await fetch(`${server.url}/metrics`, { headers: admin })).text();
  assert.match(after, /^stt_batch_jobs_finished_total\{outcome="done"\} [1-9]\d*$/m);
  assert.match(after, /^stt_batch_jobs\{status="running"\} 0$/m);
  assert.deepEqual((await (await fetch(`${server.url}/admin/status`, { headers: admin })).json()).jobs, { queued: 0, running: 0, oldestQueuedSeconds: null });
});

test('a key sees and deletes only its own jobs', async () => {
  const other = (await server.services.apiKeys.create('other')).key;
  const otherAuth = { Authorization: `Bearer ${other}` };
  const id = (await (await submit(server, server.auth, { file: wavBlob(JFK) })).json()).id;
  assert.equal((await getJob(server, otherAuth, id)).status, 404);
  assert.equal((await fetch(`${server.url}/v1/audio/jobs/${id}`, { method: 'DELETE', headers: otherAuth })).status, 404);
  const otherList = await (await fetch(`${server.url}/v1/audio/jobs`, { headers: otherAuth })).json();
  assert.deepEqual(otherList.data, []);
  const mine = await (await fetch(`${server.url}/v1/audio/jobs`, { headers: server.auth })).json();
  assert.equal(mine.data[0].id, id, 'newest first');
  const done = await ended(server, server.auth, id);
  assert.equal(done.status, 'done');
  assert.ok(done.result?.text, 'GET by id carries the result');
  // A list never carries results (a page of 50 long recordings' answers could be hundreds of MB): the rest of the view is the same.
  const listed = (await (await fetch(`${server.url}/v1/audio/jobs`, { headers: server.auth })).json()).data[0];
  const { result: _result, ...withoutResult } = done;
  assert.deepEqual(listed, withoutResult);
  // The next page starts after a job of this key; another key's job, or none, is no place to start from.
  const list = async (auth: Record<string, string>, after: string) => fetch(`${server.url}/v1/audio/jobs?after=${after}`, { headers: auth });
  const next = (await (await list(server.auth, id)).json()) as { data: { id: string }[] };
  assert.ok(!next.data.some((j) => j.id === id), 'the page after a job does not hold it');
  for (const [auth, after] of [[otherAuth, id], [server.auth, 'job_nope']] as const) {
    const res = await list(auth, after);
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: { code: string; param: string } }).error.param, 'after');
  }
});

test('a job waits behind requests, and DELETE cancels it and removes its recording; DELETE of an ended job removes it', async () => {
  const release = holdSlot(server);
  const res = await submit(server, server.auth, { file: wavBlob(JFK) });
  const { id } = await res.json();
  // The request in the slot is not paused for it: the job waits however long the request takes.
  let waiting = (await getJob(server, server.auth, id)).body;
  for (const until = Date.now() + 10_000; (waiting.status !== 'running' || server.services.local.scheduler.stats().background !== 1) && Date.now() < until; ) {
    await new Promise((r) => setTimeout(r, 20));
    waiting = (await getJob(server, server.auth, id)).body;
  }
  assert.equal(waiting.status, 'running', 'claimed by the runner, its piece waiting in the background lane');
  assert.equal(waiting.progress.seconds_done, 0);
  assert.equal(server.services.local.scheduler.stats().background, 1);
  assert.equal(spoolFiles(server).length, 1);
  assert.equal((await fetch(`${server.url}/v1/audio/jobs/${id}`, { method: 'DELETE', headers: server.auth })).status, 204);
  assert.equal((await getJob(server, server.auth, id)).body.status, 'cancelled');
  assert.deepEqual(spoolFiles(server), []);
  await release();
  await server.services.local.scheduler.idle();
  assert.equal((await getJob(server, server.auth, id)).body.status, 'cancelled', 'a cancelled job never runs');
  assert.equal((await fetch(`${server.url}/v1/audio/jobs/${id}`, { method: 'DELETE', headers: server.auth })).status, 204);
  assert.equal((await getJob(server, server.auth, id)).status, 404);
});

test('the jobs of a key revoked while they wait are cancelled when they come up, their recordings removed', async () => {
  const admin = { Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' };
  const k = await (await fetch(`${server.url}/admin/api-keys`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'jobs-revoked' }) })).json();
  const auth = { Authorization: `Bearer ${k.key}` };
  const release = holdSlot(server);
  // The first is taken up by the runner and waits for the slot; the second waits in the queue behind it.
  const first = (await (await submit(server, auth, { file: wavBlob(JFK) })).json()).id;
  const second = (await (await submit(server, auth, { file: wavBlob(JFK) })).json()).id;
  assert.equal((await fetch(`${server.url}/admin/api-keys/${k.id}/revoke`, { method: 'POST', headers: admin })).status, 200);
  await release();
  const statusOf = async (id: string) => (await (await fetch(`${server.url}/admin/jobs`, { headers: admin })).json()).data.find((j: { id: string }) => j.id === id)?.status;
  for (const until = Date.now() + 30_000; (await statusOf(second)) !== 'cancelled' && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));
  assert.equal(await statusOf(second), 'cancelled');
  assert.ok(['done', 'cancelled'].includes(await statusOf(first)), 'the one already running ends as it would');
  assert.ok(!spoolFiles(server).includes(second), 'its recording removed');
});

test('bad input is refused before anything is queued, and nothing is left in the spool', async () => {
  const cases: [Record<string, string | Blob>, number, string][] = [
    [{ file: new Blob([Buffer.from('not audio at all, not even close')]) }, 400, 'invalid_audio'],
    [{ file: wavBlob(JFK), stream: 'true' }, 400, 'unsupported_parameter'],
    [{ file: wavBlob(JFK), response_format: 'xml' }, 400, 'invalid_response_format'],
    [{ model: 'whisper-1' }, 400, 'missing_file'],
    [{ file: wavBlob(Buffer.alloc(12_100_000)) }, 413, 'file_too_large'],
    // Past STT_MAX_JOB_AUDIO_SECONDS (600 s here): 601 s of 8-kHz 8-bit audio, refused from its header.
    [{ file: wavBlob(writeWav({ rate: 8000, encoding: 'pcm_u8', channels: [new Float32Array(601 * 8000)] })) }, 400, 'audio_too_long'],
  ];
  for (const [fields, status, code] of cases) {
    const res = await submit(server, server.auth, fields);
    const body = await res.json();
    assert.deepEqual([res.status, body.error?.code], [status, code], JSON.stringify(body));
  }
  assert.deepEqual(spoolFiles(server), []);
  const list = await (await fetch(`${server.url}/v1/audio/jobs`, { headers: server.auth })).json();
  assert.ok(list.data.every((j: { status: string }) => j.status !== 'queued'), 'none of them was queued');
  assert.equal((await fetch(`${server.url}/v1/audio/jobs`, { method: 'POST', headers: { ...server.auth, 'Content-Type': 'application/json' }, body: '{}' })).status, 415);
  assert.equal((await fetch(`${server.url}/v1/audio/jobs/job_none`, { headers: server.auth })).status, 404);
  assert.equal((await fetch(`${server.url}/v1/audio/jobs`)).status, 401);
});

test('an upload cut off at the limit while it streams (no Content-Length) leaves nothing in the spool', async () => {
  const boundary = 'stt-test-boundary';
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`);
  const chunk = Buffer.alloc(1 << 20);
  let sent = 0;
  const body = new ReadableStream({
    pull(controller) {
      // 20 MB, over the 12-MB limit: the server cuts it off part-way, with part of the file written.
      if (sent === 0) controller.enqueue(head);
      if (sent++ < 20) controller.enqueue(chunk);
      else controller.close();
    },
  });
  const res = await fetch(`${server.url}/v1/audio/jobs`, {
    method: 'POST', body, duplex: 'half', headers: { ...server.auth, 'Content-Type': `multipart/form-data; boundary=${boundary}` },
  } as RequestInit).catch((e: unknown) => e);
  if (res instanceof Response) assert.equal(res.status, 413);
  assert.deepEqual(spoolFiles(server), []);
});

test('a spool disk without room for another upload beside STT_SPOOL_MIN_FREE_MB refuses a job with 503 before its upload is read, and the server stays healthy', async () => {
  // A floor no disk has (1 PiB): every upload is refused; nothing is written.
  const full = await startTestServer({ routing: { mode: 'local', localModel: 'whisper-base' }, env: { STT_SPOOL_MIN_FREE_MB: String(1024 ** 3) } });
  try {
    const res = await submit(full, full.auth, { file: wavBlob(JFK) });
    assert.deepEqual([res.status, (await res.json()).error.code, res.headers.get('retry-after')], [503, 'spool_full', '60']);
    assert.deepEqual(spoolFiles(full), []);
    assert.equal((await fetch(`${full.url}/health`)).status, 200);
    // Synchronous transcriptions do not use the spool and are not refused by it.
    assert.equal((await transcribe(full, { file: wavBlob(JFK) }, full.auth)).status, 200);
  } finally {
    await full.close();
  }
});

test('a job upload reserves what its Content-Length declares, a chunked one the upload limit: a small upload is taken where a chunked one has no room', async (t) => {
  // The disk's free space less 1 GiB is the floor (wide of what other writers change meanwhile): room for a
  // small upload, none for a chunked one counted at the 2-GiB limit. (Counting every upload at the limit, as
  // before, refused the small one too.)
  const dataDir = tempDataDir();
  const freeMiB = Math.floor((await freeBytes(dataDir)) / MiB);
  if (freeMiB < 1200) return t.skip(`${freeMiB} MiB free in ${dataDir}: too little to leave 1 GiB either side`);
  const floorMiB = freeMiB - 1024;
  const tight = await startTestServer({
    dataDir, routing: { mode: 'local', localModel: 'whisper-base' },
    env: { STT_SPOOL_MIN_FREE_MB: String(floorMiB), STT_MAX_JOB_UPLOAD_BYTES: String(2 ** 31 - 1) },
  });
  try {
    const small = await submit(tight, tight.auth, { file: wavBlob(JFK) });
    assert.equal(small.status, 202, JSON.stringify(await small.clone().json()));
    assert.equal((await ended(tight, tight.auth, (await small.json()).id)).status, 'done');

    const boundary = 'chunkedjobupload';
    const parts = [
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="jfk.wav"\r\nContent-Type: audio/wav\r\n\r\n`,
      JFK, `\r\n--${boundary}--\r\n`,
    ];
    const body = new ReadableStream({
      pull(c) {
        const next = parts.shift();
        if (next === undefined) c.close();
        else c.enqueue(typeof next === 'string' ? new TextEncoder().encode(next) : new Uint8Array(next));
      },
    });
    const chunked = await fetch(`${tight.url}/v1/audio/jobs`, {
      method: 'POST', body, duplex: 'half', headers: { ...tight.auth, 'Content-Type': `multipart/form-data; boundary=${boundary}` },
    } as RequestInit);
    assert.deepEqual([chunked.status, (await chunked.json()).error.code], [503, 'spool_full']);
    assert.deepEqual(spoolFiles(tight), []);
  } finally {
    await tight.close();
  }
});

test('a database that fails to store a finished job\'s answer is asked again: the job ends done, never failed', { timeout: 120_000 }, async () => {
  const store = server.services.jobs.store;
  const finish = store.finish;
  let refused = 0;
  // As a full disk or a lock held past the busy timeout answers the write, once.
  store.finish = async (...args) => {
    if (refused++ === 0) throw new Error('SQLITE_FULL: database or disk is full');
    return finish.apply(store, args);
  };
  try {
    const { id } = await (await submit(server, server.auth, { file: wavBlob(JFK) })).json();
    const done = await ended(server, server.auth, id);
    assert.equal(done.status, 'done', JSON.stringify(done.error));
    assert.equal(refused, 2, 'stored at the second try');
  } finally {
    store.finish = finish;
  }
});

test('a submission the database fails once its row may be written leaves no job behind (a failed re-read, a failed cap check)', async () => {
  const store = server.services.jobs.store;
  const { create, unfinished } = store;
  const count = async () => (await (await fetch(`${server.url}/v1/audio/jobs`, { headers: server.auth })).json()).data.length;
  const before = await count();
  // The insert written and its acknowledgement lost; then the cap's second look after the row (the route's third
  // unfinished(): the first two come before the upload is read and before the row is written).
  const failures: [string, () => void][] = [
    ['create', () => { store.create = async (...args) => { await create.apply(store, args); throw new Error('connection terminated'); }; }],
    ['unfinished', () => { let calls = 0; store.unfinished = async (...args) => { if (++calls === 3) throw new Error('connection terminated'); return unfinished.apply(store, args); }; }],
  ];
  for (const [what, fail] of failures) {
    fail();
    try {
      const res = await submit(server, server.auth, { file: wavBlob(JFK) });
      assert.equal(res.status, 500, `${what}: ${await res.clone().text()}`);
    } finally {
      store.create = create;
      store.unfinished = unfinished;
    }
    assert.equal(await count(), before, `${what}: no row for the job the client was refused`);
    assert.deepEqual(spoolFiles(server), [], what);
  }
});

test('a key may have so many jobs waiting; a server with no model takes none', async () => {
  const release = holdSlot(server);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await (await submit(server, server.auth, { file: wavBlob(JFK) })).json()).id);
  const refused = await submit(server, server.auth, { file: wavBlob(JFK) });
  assert.equal(refused.status, 429);
  assert.equal((await refused.json()).error.code, 'too_many_jobs');
  assert.equal(refused.headers.get('retry-after'), '60');
  // Refused before the upload is read: an upload that has sent only its first part gets the 429, and nothing reaches the spool.
  const spooled = spoolFiles(server);
  const early = await new Promise<{ status: number; body: any }>((resolve, reject) => {
    const boundary = 'stt-cap-boundary';
    const req = http.request(`${server.url}/v1/audio/jobs`, { method: 'POST', headers: { ...server.auth, 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': String(10_000_000) } });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c));
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) });
      });
    });
    req.on('error', reject);
    setTimeout(() => {
      req.destroy();
      reject(new Error('no answer while the upload was unfinished: the cap was not checked before it'));
    }, 30_000).unref();
    req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`);
    req.write(Buffer.alloc(64 * 1024)); // and never the rest
  });
  assert.deepEqual([early.status, early.body.error.code], [429, 'too_many_jobs']);
  assert.deepEqual(spoolFiles(server), spooled, 'only the three jobs\' recordings');
  for (const id of ids) await fetch(`${server.url}/v1/audio/jobs/${id}`, { method: 'DELETE', headers: server.auth });
  await release();
  assert.equal((await submit(server, server.auth, { file: wavBlob(JFK) })).status, 202, 'room again once they ended');
  const bare = await startTestServer({ env: { STT_ALLOW_PRIVATE_ADDRESSES: 'true', STT_ALLOW_INSECURE_LOOPBACK: 'true' } });
  try {
    const res = await submit(bare, bare.auth, { file: wavBlob(JFK) });
    assert.deepEqual([res.status, (await res.json()).error.code], [502, 'no_active_model']);
    // What providers may reach, callbacks may not: a key holder chooses a callback URL.
    const inward = await submit(bare, bare.auth, { file: wavBlob(JFK), callback_url: 'https://127.0.0.1:9200/index/_doc' });
    assert.deepEqual([inward.status, (await inward.json()).error.param], [400, 'callback_url']);
    assert.deepEqual(spoolFiles(bare), []);
  } finally {
    await bare.close();
  }
});

test('a job stopped part-way resumes from its last checkpoint and still answers what the synchronous request answers', async () => {
  // Arrival order never pauses: a request that comes while the job runs stops it (evicts it) outright.
  const evicting = await startTestServer({ routing: { mode: 'local', localModel: 'whisper-base' }, env: { STT_SCHEDULING: 'arrival', STT_MAX_JOB_UPLOAD_BYTES: '12000000' } });
  try {
    const local = evicting.services.local;
    const runs: LocalRequest[] = [];
    const transcribeLocal = local.transcribe.bind(local);
    local.transcribe = (req) => {
      if (req.background) runs.push(req);
      return transcribeLocal(req);
    };
    const wav = wav16k(loopedSpeech(330));
    const { id } = await (await submit(evicting, evicting.auth, { file: wavBlob(wav), response_format: 'verbose_json', 'timestamp_granularities[]': 'word' })).json();
    let job;
    for (;;) {
      job = (await getJob(evicting, evicting.auth, id)).body;
      if (job.status === 'done' || job.progress.seconds_done > 0) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(job.status, 'running', 'a checkpoint was recorded before the end');
    assert.equal((await transcribe(evicting, { file: wavBlob(JFK) }, evicting.auth)).status, 200, 'the request takes the slot');
    const done = await ended(evicting, evicting.auth, id);
    assert.equal(done.status, 'done', JSON.stringify(done.error));
    assert.ok(runs.length >= 2 && runs.at(-1)!.options.resumeFrom, `the job ran again from a checkpoint (${runs.length} runs)`);
    assert.ok(runs.at(-1)!.options.resumeFrom!.seconds >= job.progress.seconds_done, 'from the last one recorded');
    assert.deepEqual(done.result, await synchronous(evicting, wav));
    assert.deepEqual(spoolFiles(evicting), []);
  } finally {
    await evicting.close();
  }
});

test('a job whose checkpoint another model or other settings made starts over, and still answers what the synchronous request answers', async () => {
  const wav = wav16k(loopedSpeech(70));
  const spool = path.join(server.dataDir, 'spool', 'job_stale');
  writeFileSync(spool, wav);
  // As a job run by another runtime would have left it: a checkpoint at 30 s, with a segment a fresh run would not give.
  const segment = { start: 0, end: 30, text: ' STALE TEXT.', tokens: [], tokensWithTimestamps: [], seek: 0, temperature: 0, avgLogprob: 0, noSpeechProb: 0 };
  const partial = { resume: { position: 3000, prompt: [], clock: [0, 0, 0], rngs: [], language: 'en', seconds: 30, by: '{"runtime":"whisper-small"}' }, segments: [segment], gatedSegments: 0 };
  const key = await server.services.apiKeys.verify(server.apiKey);
  const form = { task: 'transcribe', format: 'verbose_json', granularities: ['word'] };
  await server.services.db.run(
    `INSERT INTO jobs (id, key_id, status, form, spool, seconds_total, seconds_done, partial, created_at) VALUES (?, ?, 'queued', ?, ?, 70, 30, ?, ?)`,
    ['job_stale', key!.id, JSON.stringify(form), 'job_stale', JSON.stringify(partial), Date.now()]);
  server.services.jobs.runner.wake();
  const done = await ended(server, server.auth, 'job_stale');
  assert.equal(done.status, 'done', JSON.stringify(done.error));
  assert.doesNotMatch(done.result.text, /STALE/);
  assert.deepEqual(done.result, await synchronous(server, wav));
});

/** A loopback receiver of callbacks: answers each with the next status of `statuses` (then 200), and keeps what came. */
async function receiver(statuses: number[]): Promise<{ url: string; calls: { headers: http.IncomingHttpHeaders; body: string }[]; close: () => Promise<void> }> {
  const calls: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      calls.push({ headers: req.headers, body });
      res.writeHead(statuses.shift() ?? 200).end();
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/hooks/stt`, calls, close: () => new Promise((r) => srv.close(() => r())) };
}

/** Whether `header` (Stt-Signature) signs `body` with `secret`, sent within the last minute. */
function verifies(header: string, body: string, secret: string): boolean {
  const { t, v1 } = Object.fromEntries(header.split(',').map((p) => p.split('=') as [string, string]));
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
  return Math.abs(Date.now() / 1000 - Number(t)) < 60 && timingSafeEqual(Buffer.from(v1, 'hex'), Buffer.from(expected, 'hex'));
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(check());
}

test('a job\'s callback is signed with the key\'s secret, retried after a failure, and delivered once', async () => {
  const hook = await receiver([500]);
  try {
    const secret = (await (await fetch(`${server.url}/v1/audio/job-callbacks/secret`, { headers: server.auth })).json()).secret;
    assert.match(secret, /^whsec_[A-Za-z0-9_-]{43}$/);
    const res = await submit(server, server.auth, { file: wavBlob(JFK), callback_url: hook.url });
    const accepted = await res.json();
    assert.deepEqual([res.status, accepted.callback_url, accepted.callback_status], [202, hook.url, 'waiting']);
    const done = await ended(server, server.auth, accepted.id);
    // The first attempt is answered 500; the next, a second later, 200.
    await until(() => hook.calls.length === 2);
    for (const call of hook.calls) {
      assert.equal(call.headers['content-type'], 'application/json');
      assert.ok(verifies(String(call.headers['stt-signature']), call.body, secret), 'signed with the key\'s secret');
      assert.ok(!verifies(String(call.headers['stt-signature']), call.body.replace('"done"', '"failed"'), secret), 'a changed body does not verify');
      const body = JSON.parse(call.body);
      assert.deepEqual([body.id, body.status, body.result], [accepted.id, 'done', done.result], 'the job as GET shows it');
    }
    const after = (await getJob(server, server.auth, accepted.id)).body;
    assert.equal(after.callback_status, 'delivered');
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(hook.calls.length, 2, 'once delivered, never again');
    const other = (await server.services.apiKeys.create('other-callbacks')).key;
    const otherSecret = (await (await fetch(`${server.url}/v1/audio/job-callbacks/secret`, { headers: { Authorization: `Bearer ${other}` } })).json()).secret;
    assert.notEqual(otherSecret, secret, 'each key has its own');
  } finally {
    await hook.close();
  }
});

test('a failed job calls back with its error; a callback URL against the rules is refused at submission', async () => {
  const hook = await receiver([]);
  try {
    const key = await server.services.apiKeys.verify(server.apiKey);
    await server.services.db.run(
      `INSERT INTO jobs (id, key_id, status, form, spool, seconds_total, callback_url, created_at) VALUES (?, ?, 'queued', ?, ?, 1, ?, ?)`,
      ['job_lost', key!.id, JSON.stringify({ task: 'transcribe', format: 'json', granularities: ['segment'] }), path.join(server.dataDir, 'spool', 'job_lost'), hook.url, Date.now()]);
    server.services.jobs.runner.wake();
    await until(() => hook.calls.length === 1);
    const body = JSON.parse(hook.calls[0].body);
    assert.deepEqual([body.id, body.status, body.error.code], ['job_lost', 'failed', 'recording_missing']);
    for (const url of ['http://example.com/hook', 'https://169.254.169.254/latest', 'ftp://127.0.0.1/x', 'not a url']) {
      const res = await submit(server, server.auth, { file: wavBlob(JFK), callback_url: url });
      const refused = await res.json();
      assert.deepEqual([res.status, refused.error.code, refused.error.param], [400, 'invalid_value', 'callback_url'], url);
    }
    assert.deepEqual(spoolFiles(server), []);
  } finally {
    await hook.close();
  }
});
