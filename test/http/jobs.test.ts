// The jobs API (issue 38, slice 1) on a generated model: submit, poll, fetch
// the answer (the same as the synchronous one), pieces of a long recording,
// key scoping, cancel and removal with the spool emptied, the limits, and a
// restart in the middle of a job.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { startTestServer, transcribe, wavBlob, type TestServer } from '../helpers/server';
import { AUDIO_DIR, loopedSpeech, wav16k } from '../../fixtures';
import { openDatabase } from '../../src/store/open-database';
import { JobStore } from '../../src/store/jobs';

const JFK = readFileSync(path.join(AUDIO_DIR, 'jfk.wav'));
let server: TestServer;

before(async () => {
  server = await startTestServer({ routing: { mode: 'local', localModel: 'whisper-base' }, env: { STT_MAX_JOB_UPLOAD_BYTES: '12000000' } });
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

test('a recording longer than a piece is transcribed in pieces, its times running on across them', async () => {
  const res = await submit(server, server.auth, { file: wavBlob(wav16k(loopedSpeech(330))), response_format: 'verbose_json' });
  assert.equal(res.status, 202);
  const done = await ended(server, server.auth, (await res.json()).id);
  assert.equal(done.status, 'done', JSON.stringify(done.error));
  assert.equal(done.result.duration, 330);
  const starts = done.result.segments.map((s: { start: number }) => s.start);
  assert.ok(starts.some((t: number) => t > 280) && starts.some((t: number) => t < 30), `segments across both pieces: ${starts}`);
  assert.deepEqual(starts, [...starts].sort((a, b) => a - b), 'times never go back');
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
  await ended(server, server.auth, id);
});

test('a job waits behind requests, and DELETE cancels it and removes its recording; DELETE of an ended job removes it', async () => {
  const release = holdSlot(server);
  const res = await submit(server, server.auth, { file: wavBlob(JFK) });
  const { id } = await res.json();
  // The request in the slot is not paused for it: the job waits however long the request takes.
  await new Promise((r) => setTimeout(r, 300));
  const waiting = (await getJob(server, server.auth, id)).body;
  assert.ok(['queued', 'running'].includes(waiting.status), waiting.status);
  assert.equal(waiting.progress.seconds_done, 0);
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

test('bad input is refused before anything is queued, and nothing is left in the spool', async () => {
  const cases: [Record<string, string | Blob>, number, string][] = [
    [{ file: new Blob([Buffer.from('not audio at all, not even close')]) }, 400, 'invalid_audio'],
    [{ file: wavBlob(JFK), stream: 'true' }, 400, 'unsupported_parameter'],
    [{ file: wavBlob(JFK), callback_url: 'https://example.com/hook' }, 400, 'unsupported_parameter'],
    [{ file: wavBlob(JFK), response_format: 'xml' }, 400, 'invalid_response_format'],
    [{ model: 'whisper-1' }, 400, 'missing_file'],
    [{ file: wavBlob(Buffer.alloc(12_100_000)) }, 413, 'file_too_large'],
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

test('a job survives a restart: queued again at shutdown, or left running by a process that died, it completes once', async () => {
  const first = await startTestServer({ routing: { mode: 'local', localModel: 'whisper-base' } });
  const { dataDir, auth } = first;
  const release = holdSlot(first);
  const { id } = await (await submit(first, auth, { file: wavBlob(JFK) })).json();
  await new Promise((r) => setTimeout(r, 200));
  // Shut down with the job's piece waiting behind the held request: it goes back to the queue.
  const closed = first.close();
  await release();
  await closed;
  const db = await openDatabase({ dataDir, databaseUrl: null });
  assert.equal((await new JobStore(db).get(id))?.status, 'queued');
  // As if a process had died holding it: running, under a lease that has not run out.
  await db.run(`UPDATE jobs SET status = 'running', lease_owner = 'gone', lease_until = ? WHERE id = ?`, [Date.now() + 3600_000, id]);
  await db.close();
  const second = await startTestServer({ dataDir, createKey: false });
  try {
    const done = await ended(second, auth, id);
    assert.equal(done.status, 'done', JSON.stringify(done));
    const sync = await transcribe(second, { file: wavBlob(JFK) }, auth);
    assert.deepEqual(done.result, await sync.json());
    assert.deepEqual(spoolFiles(second), []);
  } finally {
    await second.close();
  }
});
