// Model downloads against a loopback file server that misbehaves the way real
// mirrors do: a stale partial (416), a stall, a trickle, a file of the other family, a
// 404, a server that ignores Range, and a shutdown mid-transfer.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { startTestServer, tempDataDir, type TestServer } from '../helpers/server';
import { startModelServer, type ModelServer, microModel, PARAKEET_FIXTURE, VAD_FIXTURE } from '../../fixtures';

// whisper-base's default file, the one a download without a variant fetches.
const FILE = 'ggml-base-q8_0.bin';
const PARTIAL = `.${FILE}.partial`;
let models: ModelServer;
let whisper: Buffer;
let parakeet: Buffer;

before(async () => {
  models = await startModelServer();
  whisper = readFileSync(await microModel());
  parakeet = readFileSync(PARAKEET_FIXTURE);
});
after(() => models.close());

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A server with no models installed; `serve` is put on the model server as FILE and pinned, so only the check under test can refuse it. */
async function start(serve: Buffer | null, dataDir = tempDataDir()): Promise<TestServer> {
  if (serve) models.files.set(FILE, serve);
  else models.files.delete(FILE);
  models.rangeRequests.length = 0;
  const server = await startTestServer({ dataDir, installModels: false, env: { STT_MODEL_BASE_URL: models.url } });
  if (serve) server.services.downloader.published.set(FILE, { bytes: serve.length, sha256: sha256(serve) });
  return server;
}

const modelsDir = (s: TestServer) => path.join(s.dataDir, 'models');

/** A download that failed with `error` and left nothing in the models directory. */
function failedAndNothingInstalled(s: TestServer, e: { download: { state: string; error: string | null }; installed: boolean }, error: string): void {
  assert.equal(e.download.state, 'failed');
  assert.equal(e.download.error, error);
  assert.equal(e.installed, false);
  assert.deepEqual(readdirSync(modelsDir(s)), []);
}

async function dl(s: TestServer, method: string, p: string): Promise<Response> {
  return fetch(`${s.url}${p}`, { method, headers: { Authorization: `Bearer ${s.adminKey}` } });
}

async function entry(s: TestServer, id: string): Promise<any> {
  return ((await (await dl(s, 'GET', '/admin/local-models')).json()).data as any[]).find((m) => m.id === id);
}

/** Starts a download and waits (bounded, generously) until it is done or failed. */
async function download(s: TestServer, id = 'whisper-base'): Promise<any> {
  assert.equal((await dl(s, 'POST', `/admin/local-models/${id}/download`)).status, 202);
  for (let i = 0; i < 1500; i++) {
    const e = await entry(s, id);
    if (e.download.state === 'done' || e.download.state === 'failed') return e;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail('download did not settle');
}

test('downloads: a stale partial larger than the file gets a 416, and the download starts over from zero', async () => {
  const dataDir = tempDataDir();
  mkdirSync(path.join(dataDir, 'models'));
  // Left from another, bigger version of the file: no Range from its end can be satisfied.
  writeFileSync(path.join(dataDir, 'models', PARTIAL), Buffer.alloc(whisper.length + 1000, 7));
  const s = await start(whisper, dataDir);
  try {
    const e = await download(s);
    assert.equal(e.download.state, 'done', e.download.error);
    assert.equal(e.download.checksumVerified, true);
    assert.deepEqual(models.rangeRequests, [`bytes=${whisper.length + 1000}-`], 'asked to resume the stale partial first');
    assert.ok(readFileSync(path.join(modelsDir(s), FILE)).equals(whisper));
    assert.deepEqual(readdirSync(modelsDir(s)), [FILE], 'the stale partial is gone');
  } finally {
    await s.close();
  }
});

test('downloads: a server that ignores Range and sends the whole file with 200 gives the file, not the partial plus the file', async () => {
  const dataDir = tempDataDir();
  mkdirSync(path.join(dataDir, 'models'));
  writeFileSync(path.join(dataDir, 'models', PARTIAL), whisper.subarray(0, 5000));
  const s = await start(whisper, dataDir);
  models.ignoreRange = true;
  try {
    const e = await download(s);
    assert.deepEqual(models.rangeRequests, ['bytes=5000-'], 'a Range was asked for');
    assert.equal(e.download.state, 'done', e.download.error);
    assert.ok(readFileSync(path.join(modelsDir(s), FILE)).equals(whisper));
    assert.deepEqual(readdirSync(modelsDir(s)), [FILE]);
  } finally {
    models.ignoreRange = false;
    await s.close();
  }
});

test('downloads: a transfer that stalls fails after the stall timeout, keeps its partial, and the next request resumes it', async () => {
  const s = await start(whisper);
  s.services.downloader.stallMs = 300;
  models.holdAt = [5000];
  try {
    let e = await download(s);
    assert.equal(e.download.state, 'failed');
    assert.match(e.download.error, /no data for 300 ms/);
    assert.equal(e.installed, false);
    const kept = statSync(path.join(modelsDir(s), PARTIAL)).size;
    assert.ok(kept > 0 && kept <= 5000, `partial of ${kept} bytes`);

    models.holdAt = [];
    models.release();
    e = await download(s);
    assert.equal(e.download.state, 'done', e.download.error);
    assert.deepEqual(models.rangeRequests, [`bytes=${kept}-`], 'resumed from the partial');
    assert.ok(readFileSync(path.join(modelsDir(s), FILE)).equals(whisper));
  } finally {
    models.holdAt = [];
    await s.close();
  }
});

test('downloads: a transfer that trickles (never stalled, too slow on average) is cut off at its deadline, keeps its partial, and the next request resumes it', async () => {
  const s = await start(whisper);
  const d = s.services.downloader;
  // 200 bytes every 20 ms (about 10 KB/s): never 5 s without data, so only the average (1 s here) can stop it.
  d.stallMs = 5000;
  d.minTransferMs = 0;
  d.minBytesPerSecond = whisper.length; // the whole file in a second: the deadline is 1 s
  models.throttle = { chunk: 200, delayMs: 20 };
  try {
    let e = await download(s);
    assert.equal(e.download.state, 'failed');
    assert.match(e.download.error, /^too slow: under \d+ bytes\/s on average for 1 s \(\d+ bytes of the file so far\); downloading again resumes it$/);
    const kept = statSync(path.join(modelsDir(s), PARTIAL)).size;
    assert.ok(kept > 0 && kept < whisper.length, `partial of ${kept} bytes`);

    models.throttle = null;
    d.minBytesPerSecond = 64 * 1024;
    e = await download(s);
    assert.equal(e.download.state, 'done', e.download.error);
    assert.deepEqual(models.rangeRequests, [`bytes=${kept}-`], 'resumed from the partial');
    assert.ok(readFileSync(path.join(modelsDir(s), FILE)).equals(whisper));
  } finally {
    models.throttle = null;
    await s.close();
  }
});

test('downloads: a body larger than the pinned size is refused, whether announced or streamed without a length, and nothing of it is kept', async () => {
  const s = await start(whisper);
  const pinned = 4096;
  s.services.downloader.published.set(FILE, { bytes: pinned, sha256: sha256(whisper.subarray(0, pinned)) });
  try {
    // Announced: refused before a byte is written.
    failedAndNothingInstalled(s, await download(s), `size mismatch: the server announced ${whisper.length} bytes, expected ${pinned}`);
    // Streamed with no length (an endless answer would do the same): cut off once past the size, the partial removed.
    models.omitLength = true;
    failedAndNothingInstalled(s, await download(s), `size mismatch: more than the ${pinned} bytes expected`);
  } finally {
    models.omitLength = false;
    await s.close();
  }
});

test('downloads: a file of the other family is refused and not installed, both ways', async () => {
  // A Parakeet file where whisper-base's file should be; size and sha256 pinned to it.
  let s = await start(parakeet);
  try {
    const e = await download(s);
    failedAndNothingInstalled(s, e, 'downloaded file is not a usable model: the file is a parakeet model, whisper-base needs whisper');
  } finally {
    await s.close();
  }
  // A Whisper file for Parakeet; size and sha256 pinned to it.
  s = await start(null);
  models.files.set('parakeet-tdt-0.6b-v3-q8_0.bin', whisper);
  s.services.downloader.published.set('parakeet-tdt-0.6b-v3-q8_0.bin', { bytes: whisper.length, sha256: sha256(whisper) });
  try {
    const e = await download(s, 'parakeet-tdt-0.6b-v3');
    failedAndNothingInstalled(s, e, 'downloaded file is not a usable model: the file is a whisper model, parakeet-tdt-0.6b-v3 needs parakeet');
  } finally {
    models.files.delete('parakeet-tdt-0.6b-v3-q8_0.bin');
    await s.close();
  }
});

test('downloads: a catalogue file with no pinned sha256 is refused before it is fetched, unless the host sets STT_ALLOW_UNPINNED_MODELS', async () => {
  // Parakeet's files have none. Nothing is served for them: a fetch would fail with 404 instead.
  let s = await start(null);
  try {
    const e = await download(s, 'parakeet-tdt-0.6b-v3');
    failedAndNothingInstalled(s, e, 'parakeet-tdt-0.6b-v3-q8_0.bin has no pinned sha256; set STT_ALLOW_UNPINNED_MODELS=true to install it unverified, or place the file in the models directory');
  } finally {
    await s.close();
  }
  models.files.set('parakeet-tdt-0.6b-v3-q8_0.bin', parakeet);
  s = await startTestServer({ installModels: false, env: { STT_MODEL_BASE_URL: models.url, STT_ALLOW_UNPINNED_MODELS: 'true' } });
  try {
    const e = await download(s, 'parakeet-tdt-0.6b-v3');
    assert.equal(e.download.state, 'done', e.download.error);
    assert.deepEqual([e.installed, e.download.checksumVerified, e.download.sha256], [true, false, sha256(parakeet)], 'installed, recorded, not verified');
  } finally {
    models.files.delete('parakeet-tdt-0.6b-v3-q8_0.bin');
    await s.close();
  }
});

test('downloads: a 404 from the download server fails with its status and installs nothing', async () => {
  const s = await start(null);
  try {
    const e = await download(s);
    failedAndNothingInstalled(s, e, 'download server answered HTTP 404');
  } finally {
    await s.close();
  }
});

test('downloads: shutdown aborts a download in progress and keeps the partial, which the next start resumes', async () => {
  const dataDir = tempDataDir();
  let s = await start(whisper, dataDir);
  models.holdAt = [5000];
  try {
    assert.equal((await dl(s, 'POST', '/admin/local-models/whisper-base/download')).status, 202);
    for (let i = 0; i < 1500 && (await entry(s, 'whisper-base')).download.receivedBytes < 5000; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal((await entry(s, 'whisper-base')).download.receivedBytes, 5000, 'held at 5000 bytes');

    // The model server keeps the response open: only the downloader's own abort ends it.
    const bound = new Promise<'hung'>((r) => setTimeout(r, 15_000, 'hung').unref());
    assert.equal(await Promise.race([s.close(), bound]), undefined, 'the server closed');
    const downloader = s.services.downloader;
    for (let i = 0; i < 500 && downloader.isRunning('whisper-base'); i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(downloader.isRunning('whisper-base'), false, 'the download was aborted');
    assert.equal(downloader.progress('whisper-base')!.state, 'failed');
    assert.equal(existsSync(path.join(dataDir, 'models', FILE)), false);
    const kept = statSync(path.join(dataDir, 'models', PARTIAL)).size;
    assert.ok(kept > 0 && kept <= 5000, `partial of ${kept} bytes`);

    models.holdAt = [];
    models.release();
    s = await start(whisper, dataDir);
    const e = await download(s);
    assert.equal(e.download.state, 'done', e.download.error);
    assert.deepEqual(models.rangeRequests, [`bytes=${kept}-`], 'resumed from the partial');
    assert.ok(readFileSync(path.join(dataDir, 'models', FILE)).equals(whisper));
  } finally {
    models.holdAt = [];
    await s.close();
  }
});

test('downloads: the VAD model comes with the first runtime, checked against its pinned sha256; a wrong file is not installed and the runtime still is', async () => {
  const vad = readFileSync(VAD_FIXTURE);
  models.files.set(FILE, whisper);
  const serve = async (body: Buffer) => {
    models.files.set('vad/ggml-silero-v6.2.0.bin', body);
    const s = await startTestServer({ installModels: false, env: { STT_MODEL_BASE_URL: models.url, STT_VAD_MODEL_URL: `${models.url}/vad/ggml-silero-v6.2.0.bin` } });
    s.services.downloader.published.set(FILE, { bytes: whisper.length, sha256: sha256(whisper) });
    return s;
  };
  const good = await serve(vad);
  try {
    assert.equal((await download(good)).download.state, 'done');
    assert.deepEqual(readdirSync(modelsDir(good)).sort(), [FILE, 'ggml-silero-v6.2.0.bin']);
    assert.ok(readFileSync(path.join(modelsDir(good), 'ggml-silero-v6.2.0.bin')).equals(vad));
  } finally {
    await good.close();
  }
  // Same size, one byte changed: the pinned sha256 refuses it.
  const tampered = Buffer.from(vad);
  tampered[tampered.length - 1] ^= 1;
  const bad = await serve(tampered);
  try {
    assert.equal((await download(bad)).download.state, 'done', 'the runtime is installed all the same');
    assert.deepEqual(readdirSync(modelsDir(bad)), [FILE], 'no VAD model, and no partial left');
  } finally {
    await bad.close();
  }
});
