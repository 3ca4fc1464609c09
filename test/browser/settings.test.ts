// The settings page in Debian's Chromium, driven by playwright-core: every
// main flow, checked through the public API afterwards. Screenshots of each
// view go to test/.artifacts/screenshots/ for a reviewer.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestServer, tempDataDir, transcribe, wavBlob, type TestServer } from '../helpers/server';
import { startOpenAiLike, startModelServer, type FakeServer, type ModelServer, AUDIO_DIR, ROOT, microModel, encodedAudio } from '../../fixtures';
import type { ApiKeyView, List, RoutingView } from '../../src/admin-api';

const SHOTS = path.join(ROOT, 'test', '.artifacts', 'screenshots');
const JFK = readFileSync(path.join(AUDIO_DIR, 'jfk.wav'));
const PROVIDER_KEY = 'sk-browser-provider-key-9876';
let server: TestServer;
let provider: FakeServer;
let models: ModelServer;
let browser: Browser;
let page: Page;
/** The server's log lines (the request log says what each upload was). */
const logs: Record<string, unknown>[] = [];

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  provider = await startOpenAiLike(PROVIDER_KEY);
  models = await startModelServer();
  const micro = await microModel();
  models.files.set('ggml-small-q8_0.bin', readFileSync(micro));
  const dataDir = tempDataDir();
  mkdirSync(path.join(dataDir, 'models'));
  symlinkSync(micro, path.join(dataDir, 'models', 'ggml-base.bin'));
  server = await startTestServer({ dataDir, installModels: false, routing: { mode: 'local', localModel: 'whisper-base' }, env: { STT_MODEL_BASE_URL: models.url }, logs });
  // The catalogue pins the real file's size and sha256; pin the generated one this test serves.
  const served = readFileSync(micro);
  server.services.downloader.published.set('ggml-small-q8_0.bin', { bytes: served.length, sha256: createHash('sha256').update(served).digest('hex') });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage',
      // A microphone for the "Try it" panel: jfk.wav played once, granted without a prompt.
      '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${path.join(AUDIO_DIR, 'jfk.wav')}%noloop`],
  });
  page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  page.on('dialog', (d) => void d.accept());
});

after(async () => {
  await browser?.close();
  await server?.close();
  await Promise.all([provider?.close(), models?.close()]);
});

const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
const notice = () => page.locator('#notice');
const statusField = (name: string) => page.locator(`#status-list dd[data-field="${name}"]`);
/** Waits for the page's next poll of `path` to have been answered and drawn. */
async function nextPoll(path: string): Promise<void> {
  await page.waitForResponse((r) => r.url().endsWith(path) && r.request().method() === 'GET');
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(resolve)));
}

/** The admin API straight, to check what the page stored. */
async function adminApi<T>(method: string, route: string, body?: unknown): Promise<T> {
  const res = await fetch(`${server.url}${route}`, {
    method,
    headers: { Authorization: `Bearer ${server.adminKey}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${route}: HTTP ${res.status} ${text}`);
  return JSON.parse(text) as T;
}
const storedKey = async (id: string) => (await adminApi<List<ApiKeyView>>('GET', '/admin/api-keys')).data.find((k) => k.id === id);

/** Picks "Cloud provider" and checks a status poll landing before the submit leaves the form up. */
async function chooseCloud(): Promise<void> {
  await page.getByRole('radio', { name: 'Cloud provider' }).check();
  await page.waitForResponse((r) => r.url().endsWith('/admin/routing') && r.request().method() === 'GET');
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(resolve)));
  assert.equal(await page.getByRole('radio', { name: 'Cloud provider' }).isChecked(), true);
  assert.equal(await page.locator('#cloud-panel').isVisible(), true);
}

test('the page is served with a strict CSP and no secrets', async () => {
  const res = await fetch(`${server.url}/settings`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-security-policy')!, /default-src 'none'; script-src 'self'/);
  const html = await res.text();
  const js = await (await fetch(`${server.url}/settings/app.js`)).text();
  for (const secret of [server.adminKey, server.apiKey]) assert.ok(!html.includes(secret) && !js.includes(secret));
});

test('a wrong admin key shows a clear message and nothing else', async () => {
  await page.goto(`${server.url}/settings`);
  await shot('1-login');
  await page.getByLabel('Admin key').fill('not-the-admin-key-123');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await notice().filter({ hasText: 'That admin key was not accepted.' }).waitFor();
  assert.equal(await page.locator('#app').isHidden(), true);
  await shot('2-wrong-key');
});

test('sign in shows status at a glance', async () => {
  await page.getByLabel('Admin key').fill(server.adminKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await statusField('Mode').filter({ hasText: 'Local' }).waitFor();
  assert.equal(await statusField('Public model').textContent(), 'service-local-stt');
  // The key stays in this tab only: not offered to the password manager, not in the field,
  // in sessionStorage and nowhere that outlives the tab.
  assert.equal(await page.locator('#admin-key').getAttribute('autocomplete'), 'off');
  assert.equal(await page.locator('#admin-key').inputValue(), '');
  const stored = await page.evaluate(() => ({
    session: Object.keys(sessionStorage).map((k) => sessionStorage.getItem(k)),
    local: localStorage.length,
    cookies: document.cookie,
  }));
  assert.deepEqual(stored, { session: [server.adminKey], local: 0, cookies: '' });
  await statusField('Active runtime').filter({ hasText: 'whisper-base (ready)' }).waitFor();
  assert.match((await statusField('Version').textContent())!, /^\d+\.\d+\.\d+$/);
  await shot('3-status');
  await page.setViewportSize({ width: 390, height: 844 });
  await shot('3b-status-phone');
  await page.setViewportSize({ width: 1200, height: 900 });
});

test('the Ready row says whether the route can serve, with the reason when not', async () => {
  await statusField('Ready').filter({ hasText: /^ready \(whisper-base\)$/ }).waitFor({ timeout: 10_000 });
  await adminApi('PUT', '/admin/routing', { localModel: null });
  await statusField('Ready').filter({ hasText: /^not ready: No local speech model is active\.$/ }).waitFor({ timeout: 10_000 });
  await adminApi('PUT', '/admin/routing', { localModel: 'whisper-base' });
  await statusField('Ready').filter({ hasText: /^ready \(whisper-base\)$/ }).waitFor({ timeout: 10_000 });
  assert.equal((await fetch(`${server.url}/ready`)).status, 200);
});

test('create a key (shown once, names rendered as text), then revoke it', async () => {
  await page.locator('#key-form').getByLabel('Name').fill('<img src=x onerror=alert(1)>');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.locator('#new-key').waitFor({ state: 'visible' });
  const key = (await page.locator('#new-key-value').textContent())!;
  assert.match(key, /^sk-stt-/);
  const row = page.locator('#key-table tbody tr', { hasText: '<img src=x onerror=alert(1)>' });
  await row.waitFor();
  assert.equal(await page.locator('#key-table img').count(), 0, 'the name is text, not markup');
  assert.equal((await transcribe(server, { file: wavBlob(JFK) }, { Authorization: `Bearer ${key}` })).status, 200);
  await shot('4-keys');
  await row.getByRole('button', { name: /Revoke/ }).click();
  await row.filter({ hasText: 'revoked' }).waitFor();
  assert.equal((await transcribe(server, { file: wavBlob(JFK) }, { Authorization: `Bearer ${key}` })).status, 401);
});

test('jobs: every key\'s listed with their state and progress, and a waiting one cancelled from the page', async () => {
  const submit = async () => {
    const form = new FormData();
    form.append('file', wavBlob(JFK), 'meeting.wav');
    return (await (await fetch(`${server.url}/v1/audio/jobs`, { method: 'POST', body: form, headers: server.auth })).json()).id as string;
  };
  const done = await submit();
  while ((await server.services.jobs.store.get(done))?.status !== 'done') await new Promise((r) => setTimeout(r, 50));
  // A request holds the one slot, so the next job waits behind it.
  let release!: () => void;
  const held = server.services.local.scheduler.submit(1, undefined, () => new Promise<void>((r) => (release = r)));
  const waiting = await submit();
  const doneRow = page.locator(`#job-table tr[data-job-id="${done}"]`);
  const waitingRow = page.locator(`#job-table tr[data-job-id="${waiting}"]`);
  await doneRow.locator('[data-field="state"]', { hasText: 'done' }).waitFor();
  assert.equal(await doneRow.locator('[data-field="progress"]').textContent(), '11 of 11 s');
  await waitingRow.waitFor();
  await statusField('Jobs').filter({ hasText: /^0 queued, 1 running|^1 queued, 0 running/ }).waitFor();
  assert.equal(await doneRow.getByRole('button', { name: /Cancel/ }).count(), 0, 'an ended job has nothing to cancel');
  await shot('4b-jobs');
  await waitingRow.getByRole('button', { name: /Cancel/ }).click();
  await waitingRow.locator('[data-field="state"]', { hasText: 'cancelled' }).waitFor();
  assert.equal((await server.services.jobs.store.get(waiting))?.status, 'cancelled');
  release();
  await held;
});

test('key limits set on the page are stored, an emptied one removed, and the day\'s usage shown', async () => {
  const keyForm = page.locator('#key-form');
  await keyForm.getByLabel('Name').fill('limited');
  await keyForm.getByLabel('Requests per minute').fill('60');
  await page.getByRole('button', { name: 'Create key' }).click();
  await notice().filter({ hasText: 'Key "limited" created.' }).waitFor();
  const key = (await page.locator('#new-key-value').textContent())!;
  const id = (await adminApi<List<ApiKeyView>>('GET', '/admin/api-keys')).data.find((k) => k.name === 'limited')!.id;
  const limitsOf = async () => {
    const k = (await storedKey(id))!;
    return { requestsPerMinute: k.requestsPerMinute, audioSecondsPerDay: k.audioSecondsPerDay, localOnly: k.localOnly };
  };
  assert.deepEqual(await limitsOf(), { requestsPerMinute: 60, audioSecondsPerDay: null, localOnly: false });

  const row = page.locator(`#key-table tr[data-key-id="${id}"]`);
  await row.locator('[data-field="limits"]').filter({ hasText: /^60\/min$/ }).waitFor();
  await row.getByText('Edit limits').click();
  await row.locator('input[name="requestsPerMinute"]').fill('120');
  await row.locator('input[name="audioSecondsPerDay"]').fill('3600');
  await row.locator('input[name="localOnly"]').check();
  // A poll landing meanwhile leaves what the host typed.
  await nextPoll('/admin/api-keys');
  assert.equal(await row.locator('input[name="requestsPerMinute"]').inputValue(), '120');
  assert.equal(await row.locator('input[name="audioSecondsPerDay"]').inputValue(), '3600');
  assert.equal(await row.locator('input[name="localOnly"]').isChecked(), true);
  await row.getByRole('button', { name: 'Save limits' }).click();
  await notice().filter({ hasText: 'Limits of "limited": 120/min, 3600 s/day, local only.' }).waitFor();
  assert.deepEqual(await limitsOf(), { requestsPerMinute: 120, audioSecondsPerDay: 3600, localOnly: true });
  await row.locator('[data-field="limits"]').filter({ hasText: /^120\/min, 3600 s\/day, local only$/ }).waitFor();

  // An emptied field removes that limit; the others stay.
  await row.locator('input[name="requestsPerMinute"]').fill('');
  await row.getByRole('button', { name: 'Save limits' }).click();
  await notice().filter({ hasText: 'Limits of "limited": 3600 s/day, local only.' }).waitFor();
  assert.deepEqual(await limitsOf(), { requestsPerMinute: null, audioSecondsPerDay: 3600, localOnly: true });
  await row.locator('[data-field="limits"]').filter({ hasText: /^3600 s\/day, local only$/ }).waitFor();

  // A revoked key's row has no limits form.
  const revoked = page.locator('#key-table tbody tr', { hasText: '<img src=x onerror=alert(1)>' });
  assert.equal(await revoked.locator('form, input').count(), 0);

  // Today's usage: one request of 11 s, shown by a later poll.
  await row.locator('[data-field="usage"]').filter({ hasText: /^0 requests, 0 s of audio, 0 errors$/ }).waitFor();
  const res = await transcribe(server, { file: wavBlob(JFK) }, { Authorization: `Bearer ${key}` });
  assert.equal(res.status, 200);
  await row.locator('[data-field="usage"]').filter({ hasText: /^1 request, 11 s of audio, 0 errors$/ }).waitFor({ timeout: 10_000 });
  const usage = (await storedKey(id))!.usage!;
  assert.deepEqual({ requests: usage.requests, audioSeconds: usage.audioSeconds, errors: usage.errors }, { requests: 1, audioSeconds: 11, errors: 0 });
  await page.locator('#keys').screenshot({ path: path.join(SHOTS, '4b-key-limits.png') });
});

test('model names: aliases typed on the page are accepted by the API, and a refused one is shown', async () => {
  await page.getByLabel('Also accept').fill('whisper-1  gpt-4o-transcribe');
  await page.getByRole('button', { name: 'Save model names' }).click();
  await notice().filter({ hasText: 'Also accepting whisper-1, gpt-4o-transcribe.' }).waitFor();
  assert.equal((await transcribe(server, { file: wavBlob(JFK), model: 'gpt-4o-transcribe' }, server.auth)).status, 200);
  // The poll shows the stored list back.
  await page.waitForResponse((r) => r.url().endsWith('/admin/routing') && r.request().method() === 'GET');
  assert.equal(await page.getByLabel('Also accept').inputValue(), 'whisper-1 gpt-4o-transcribe');
  await page.getByLabel('Also accept').fill('service-local-stt');
  await page.getByRole('button', { name: 'Save model names' }).click();
  await notice().filter({ hasText: 'Aliases must be unique' }).waitFor();
  await page.getByLabel('Also accept').fill('');
  await page.getByRole('button', { name: 'Save model names' }).click();
  await notice().filter({ hasText: 'No extra model names.' }).waitFor();
  assert.equal((await transcribe(server, { file: wavBlob(JFK), model: 'whisper-1' }, server.auth)).status, 400);
});

test('configure a provider and switch to Cloud, then back to Local', async () => {
  await page.locator('#new-provider-id').fill('loopback');
  await page.locator('#new-provider-url').fill(provider.url);
  await page.getByRole('button', { name: 'Add provider' }).click();
  const card = page.locator('form[data-provider="loopback"]');
  await card.waitFor();
  await card.getByLabel('Enabled').check();
  await card.getByLabel(/API key/).fill(PROVIDER_KEY);
  await card.getByLabel(/Models/).fill('whisper-1');
  await card.getByRole('button', { name: /Save/ }).click();
  await notice().filter({ hasText: 'saved' }).waitFor();
  await card.getByText(/API key \(set, …9876\)/).waitFor();
  assert.ok(!(await page.content()).includes(PROVIDER_KEY), 'the key is never shown again');

  await chooseCloud();
  await page.locator('#cloud-provider').selectOption('loopback');
  await page.locator('#cloud-model').selectOption('whisper-1');
  await page.getByRole('button', { name: 'Use this cloud model' }).click();
  await statusField('Public model').filter({ hasText: 'loopback/whisper-1' }).waitFor();
  await statusField('Ready').filter({ hasText: /^ready \(loopback\/whisper-1\)$/ }).waitFor({ timeout: 10_000 });
  await shot('5-cloud');
  const res = await transcribe(server, { file: wavBlob(JFK) }, server.auth);
  assert.deepEqual(await res.json(), { text: 'cloud transcript from whisper-1', usage: { type: 'duration', seconds: 11 } });

  await page.getByRole('radio', { name: 'Local model' }).check();
  await statusField('Mode').filter({ hasText: 'Local' }).waitFor();
  assert.equal((await (await fetch(`${server.url}/health`)).json()).publicModel, 'service-local-stt');
});

test('spill-over set on the page is stored, and "Turn off" clears it', async () => {
  const form = page.locator('#spillover-form');
  await form.waitFor({ state: 'visible' });
  await page.locator('#spillover-current').filter({ hasText: /^Spill-over: off/ }).waitFor();
  await form.getByLabel('Provider').selectOption('loopback');
  await form.getByLabel('Model').selectOption('whisper-1');
  await form.getByLabel('Max wait (s)').fill('5');
  // A poll landing meanwhile leaves what the host picked and typed.
  await nextPoll('/admin/routing');
  assert.equal(await form.getByLabel('Max wait (s)').inputValue(), '5');
  assert.equal(await form.getByLabel('Provider').inputValue(), 'loopback');
  await form.getByRole('button', { name: 'Save spill-over' }).click();
  await notice().filter({ hasText: 'Spill-over to loopback/whisper-1' }).waitFor();
  assert.deepEqual((await adminApi<RoutingView>('GET', '/admin/routing')).spillover, { providerId: 'loopback', model: 'whisper-1', maxWaitSeconds: 5 });
  await page.locator('#spillover-current').filter({ hasText: /to loopback\/whisper-1, .* over 5 s/ }).waitFor();
  // The poll shows the stored value back once the host is done.
  await nextPoll('/admin/routing');
  assert.equal(await form.getByLabel('Max wait (s)').inputValue(), '5');

  // An empty max wait: only when the queue is full or the model loading.
  await form.getByLabel('Max wait (s)').fill('');
  await form.getByRole('button', { name: 'Save spill-over' }).click();
  await notice().filter({ hasText: 'when the local queue is full or the model is loading' }).waitFor();
  assert.deepEqual((await adminApi<RoutingView>('GET', '/admin/routing')).spillover, { providerId: 'loopback', model: 'whisper-1', maxWaitSeconds: null });
  await page.locator('#spillover-current').filter({ hasText: /to loopback\/whisper-1, when the local queue is full or the model is loading/ }).waitFor();
  await form.screenshot({ path: path.join(SHOTS, '5b-spillover.png') });

  await form.getByRole('button', { name: 'Turn off' }).click();
  await notice().filter({ hasText: 'Spill-over turned off.' }).waitFor();
  assert.equal((await adminApi<RoutingView>('GET', '/admin/routing')).spillover, null);
  await page.locator('#spillover-current').filter({ hasText: /^Spill-over: off/ }).waitFor();
});

test('download a runtime with a moving progress bar, activate it, transcribe through it', async () => {
  const size = models.files.get('ggml-small-q8_0.bin')!.length;
  // The file server holds the download at a third and at two thirds until the page has shown each: two distinct
  // values however slowly the machine or the page's 1-s poll runs.
  const holds = [Math.floor(size / 3), Math.floor((2 * size) / 3)];
  models.holdAt = holds;
  const row = page.locator('tr[data-runtime="whisper-small"]');
  await row.getByRole('button', { name: 'Download', exact: true }).click();
  const bar = row.locator('progress');
  const seen: number[] = [];
  for (const [i, held] of holds.entries()) {
    for (let t = 0; t < 400 && seen[i] !== held; t++) {
      if (await bar.count()) {
        const value = Number(await bar.getAttribute('value'));
        if (value === held) {
          seen[i] = value;
          assert.equal(Number(await bar.getAttribute('max')), size);
        }
      }
      if (seen[i] !== held) await page.waitForTimeout(50);
    }
    if (i === 0) await shot('6-downloading');
    models.release();
  }
  assert.deepEqual(seen, holds, `the progress bar showed ${holds.join(' then ')} of ${size} bytes`);
  await row.locator('[data-field="state"]').filter({ hasText: 'installed' }).waitFor();
  await row.getByRole('button', { name: 'Activate' }).click();
  await statusField('Active runtime').filter({ hasText: 'whisper-small (ready)' }).waitFor();
  await shot('7-activated');
  const res = await transcribe(server, { file: wavBlob(JFK) }, server.auth);
  assert.equal(res.status, 200);
  const status = await (await fetch(`${server.url}/admin/status`, { headers: { Authorization: `Bearer ${server.adminKey}` } })).json();
  assert.equal(status.local.activeModel, 'whisper-small');
});

test('Try it: a file, and a recording from the (fake) microphone sent as the browser recorded it, are transcribed and the text streamed in', async () => {
  await page.locator('#try-key').fill(server.apiKey);
  // A file: jfk.wav as MP3, shown with the same text the API gives for it.
  const mp3 = encodedAudio(path.join(AUDIO_DIR, 'jfk.wav'), 'mp3');
  await page.locator('#try-file').setInputFiles({ name: 'jfk.mp3', mimeType: 'audio/mpeg', buffer: mp3 });
  const fileAnswer = page.waitForResponse((r) => r.url().endsWith('/v1/audio/transcriptions'));
  await page.getByRole('button', { name: 'Transcribe file' }).click();
  assert.equal((await fileAnswer).status(), 200);
  await page.locator('#try-state').filter({ hasText: /^Done in [0-9.]+ s \(jfk\.mp3\)\.$/ }).waitFor();
  const expected = (await (await transcribe(server, { file: wavBlob(mp3) }, server.auth)).json()).text;
  assert.ok(expected.length > 0);
  assert.equal(await page.locator('#try-text').textContent(), expected);

  // The microphone: Chromium's MediaRecorder output goes up as it is, and its text is what the stream ended with.
  await page.getByRole('button', { name: 'Record' }).click();
  await page.locator('#try-state').filter({ hasText: 'Recording' }).waitFor();
  await page.waitForTimeout(3000); // three seconds of jfk.wav into the recording
  const answered = page.waitForResponse((r) => r.url().endsWith('/v1/audio/transcriptions'));
  await page.getByRole('button', { name: 'Stop and transcribe' }).click();
  const answer = await answered;
  assert.equal(answer.status(), 200);
  // The request's log line is written when the streamed answer ends, after its headers came: wait for it, bounded.
  const body = await answer.text();
  let logged: Record<string, unknown> | undefined;
  for (let i = 0; i < 1000 && !logged; i++) {
    logged = logs.find((l) => l.msg === 'request' && l.requestId === answer.headers()['x-request-id']);
    if (!logged) await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(logged?.audioFormat, 'webm/opus', 'the server decoded the WebM/Opus the browser recorded');
  assert.ok(Number(logged?.audioSeconds) > 2, `${logged?.audioSeconds} s recorded`);
  await page.locator('#try-state').filter({ hasText: /^Done in [0-9.]+ s \(a [0-9.]+-s recording, audio\/webm;codecs=opus\)\.$/ }).waitFor();
  const done = body.split('\n').filter((l) => l.startsWith('data: ') && l.includes('transcript.text.done')).map((l) => JSON.parse(l.slice(6)).text);
  assert.equal(done.length, 1, 'the stream ended with one transcript.text.done');
  assert.equal(await page.locator('#try-text').textContent(), done[0]);
  await shot('8-try-it');

  // A refused file shows the server's message.
  await page.locator('#try-file').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('not audio at all') });
  await page.getByRole('button', { name: 'Transcribe file' }).click();
  await page.locator('#try-state.error').filter({ hasText: /^HTTP 400: The file is not usable audio/ }).waitFor();
});

test('Try it, live: the (fake) microphone streamed to a realtime session; "Stop live" commits the turn and its transcript is shown', async () => {
  await page.locator('#try-key').fill(server.apiKey);
  // What the server sent, as the page's WebSocket received it.
  const frames: Record<string, any>[] = [];
  const opened = page.waitForEvent('websocket', (ws) => ws.url().includes('/v1/realtime'));
  await page.getByRole('button', { name: 'Live', exact: true }).click();
  const ws = await opened;
  ws.on('framereceived', (f) => frames.push(JSON.parse(String(f.payload))));
  await page.getByRole('button', { name: 'Stop live' }).waitFor();
  await page.locator('#try-state').filter({ hasText: /^Listening/ }).waitFor();
  await page.waitForTimeout(3000); // three seconds of the microphone streamed
  await page.getByRole('button', { name: 'Stop live' }).click();
  await page.locator('#try-state').filter({ hasText: /^Done: a [0-9.]+-s live session, 1 turn\(s\)\.$/ }).waitFor();
  await page.getByRole('button', { name: 'Live', exact: true }).waitFor();
  // No VAD model on this server: the page's commit made one turn of what was streamed, answered in full.
  const completed = frames.filter((f) => f.type === 'conversation.item.input_audio_transcription.completed');
  assert.equal(completed.length, 1, frames.map((f) => f.type).join(', '));
  assert.ok(completed[0].usage.seconds > 2, `${completed[0].usage.seconds} s streamed`);
  // Speech went up (the fake microphone plays jfk.wav), and its text came as a delta before .completed, as the page drew it.
  assert.ok(completed[0].transcript.trim().length > 0, 'the turn has text');
  assert.ok(frames.some((f) => f.type === 'conversation.item.input_audio_transcription.delta' && f.item_id === completed[0].item_id));
  assert.equal(await page.locator('#try-text').textContent(), completed[0].transcript);
  assert.ok(!(await page.locator('#try-state').getAttribute('class'))?.includes('error'));
  await shot('8b-try-live');
});

test('server errors are shown, not swallowed', async () => {
  await page.locator('#new-provider-id').fill('broken');
  await page.locator('#new-provider-url').fill('http://127.0.0.1:1/v1');
  await page.locator('#new-provider-kind').selectOption('deepgram');
  await page.getByRole('button', { name: 'Add provider' }).click();
  await page.locator('form[data-provider="broken"]').waitFor();
  await chooseCloud();
  await page.locator('#cloud-provider').selectOption('broken');
  await page.getByRole('button', { name: 'Use this cloud model' }).click();
  await page.locator('#notice.error').waitFor();
  assert.match((await notice().textContent())!, /cloud|model|disabled/i);
  await shot('9-error');
});
