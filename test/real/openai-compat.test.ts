// The official OpenAI clients against this server, unchanged but for the base
// URL and key: the openai npm package through every endpoint and format the
// server serves (json, text, srt, vtt, verbose_json with words and segments,
// streaming, translations, errors as the client's typed exceptions), curl for
// the raw event stream, and the Python openai package for the same few calls.
// Real base weights, so the text is English a test can read; cloud routes
// against a loopback OpenAI-like provider.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import OpenAI, { toFile } from 'openai';
import { AUDIO_DIR, FAKE_OPENAI_KEY, longClip, pythonVenv, spokenWav, startOpenAiLike, type FakeServer } from '../../fixtures';
import { startRealServer } from '../helpers/real-models';
import type { TestServer } from '../helpers/server';

const run = promisify(execFile);
const JFK = path.join(AUDIO_DIR, 'jfk.wav');
const PYTHON_OPENAI = ['openai==3.51.0'];

let server: TestServer;
let provider: FakeServer;
let client: OpenAI;
let dir: string;
let german: string;
let long: string;
const logs: Record<string, unknown>[] = [];

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'stt-compat-'));
  german = await spokenWav('de', dir);
  long = path.join(dir, 'long.wav');
  writeFileSync(long, longClip(120).wav);
  provider = await startOpenAiLike(FAKE_OPENAI_KEY);
  server = await startRealServer('base-q8_0', { logs });
  await admin('PUT', '/admin/routing', { aliases: ['whisper-1'] });
  await admin('PUT', '/admin/providers/oai', { kind: 'openai', baseUrl: provider.url, apiKey: FAKE_OPENAI_KEY, enabled: true, models: [{ id: 'gpt-4o-transcribe' }] });
  client = new OpenAI({ apiKey: server.apiKey, baseURL: `${server.url}/v1`, maxRetries: 0 });
});
after(async () => {
  await server?.close();
  await provider?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function admin(method: string, route: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${server.url}${route}`, {
    method,
    headers: { Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await res.json();
  assert.ok(res.ok, `${method} ${route}: ${res.status} ${JSON.stringify(answer)}`);
  return answer;
}

const upload = (file: string) => toFile(readFileSync(file), path.basename(file), { type: 'audio/wav' });

/** Every event of a streamed transcription, with when each arrived (ms after the request). */
async function streamed(file: string, c: OpenAI = client) {
  const started = performance.now();
  const stream = await c.audio.transcriptions.create({ file: await upload(file), model: 'whisper-1', stream: true });
  const out = { deltas: [] as string[], done: '', usage: undefined as unknown, at: [] as number[], jobsRunningAtFirst: -1 };
  for await (const event of stream) {
    if (out.at.length === 0) out.jobsRunningAtFirst = server.services.local.scheduler.stats().running;
    out.at.push(performance.now() - started);
    if (event.type === 'transcript.text.delta') out.deltas.push(event.delta);
    else if (event.type === 'transcript.text.done') Object.assign(out, { done: event.text, usage: event.usage });
  }
  return out;
}

test('models: the public model and the alias a client sends unchanged', async () => {
  const ids = [];
  for await (const m of client.models.list()) ids.push(m.id);
  assert.deepEqual(ids, ['service-local-stt', 'whisper-1']);
  assert.equal((await client.models.retrieve('whisper-1')).id, 'whisper-1');
  await assert.rejects(client.models.retrieve('no-such-model'), OpenAI.NotFoundError);
});

test('json, text, srt and vtt: one transcript in every format', async () => {
  const json = await client.audio.transcriptions.create({ file: await upload(JFK), model: 'whisper-1' });
  assert.match(json.text, /ask not what your country can do for you/i);
  assert.deepEqual((json as { usage?: unknown }).usage, { type: 'duration', seconds: 11 });
  const text = await client.audio.transcriptions.create({ file: await upload(JFK), model: 'whisper-1', response_format: 'text' });
  assert.equal(text, `${json.text}\n`);
  const srt = await client.audio.transcriptions.create({ file: await upload(JFK), model: 'whisper-1', response_format: 'srt' });
  assert.match(srt, /^1\n00:00:00,000 --> 00:00:\d\d,\d{3}\nAnd so/);
  const vtt = await client.audio.transcriptions.create({ file: await upload(JFK), model: 'whisper-1', response_format: 'vtt' });
  assert.match(vtt, /^WEBVTT\n\n00:00:00\.000 --> 00:00:\d\d\.\d{3}\nAnd so/);
});

test('verbose_json with word and segment timestamps', async () => {
  const v = await client.audio.transcriptions.create({
    file: await upload(JFK), model: 'whisper-1', response_format: 'verbose_json', timestamp_granularities: ['word', 'segment'],
  });
  assert.equal(v.language, 'english');
  assert.equal(v.duration, 11);
  assert.ok(v.segments!.length >= 1 && v.words!.length >= 20, `${v.segments?.length} segments, ${v.words?.length} words`);
  assert.deepEqual(v.words!.slice(0, 3).map((w) => w.word), ['And', 'so', 'my']);
  for (const w of v.words!) assert.ok(w.start <= w.end && w.end <= v.duration, JSON.stringify(w));
  assert.equal(v.segments!.map((s) => s.text).join('').trim(), v.text);
});

test('streaming: a delta per segment as windows finish, adding up to the text a plain request gets', { timeout: 300_000 }, async (t) => {
  const plain = await client.audio.transcriptions.create({ file: await upload(long), model: 'whisper-1' });
  const s = await streamed(long);
  assert.ok(s.deltas.length >= 8, `a 120-s clip decodes in several windows, each with segments: ${s.deltas.length} deltas`);
  assert.equal(s.deltas.join(''), s.done);
  assert.equal(s.done, plain.text);
  assert.deepEqual(s.usage, (plain as { usage?: unknown }).usage);
  // The first words arrive with the first window, while the job still runs.
  assert.equal(s.jobsRunningAtFirst, 1);
  const [first, last] = [s.at[0], s.at[s.at.length - 1]];
  t.diagnostic(`120-s clip on base: first delta after ${Math.round(first)} ms, done after ${Math.round(last)} ms`);
});

test('streaming with curl: the raw server-sent events', { timeout: 120_000 }, async () => {
  const { stdout } = await run('curl', ['-sS', '-N', `${server.url}/v1/audio/transcriptions`, '-H', `Authorization: Bearer ${server.apiKey}`,
    '-F', `file=@${JFK}`, '-F', 'stream=true', '-D', '-']);
  const [head, body] = stdout.split('\r\n\r\n');
  assert.match(head, /^HTTP\/1\.1 200/);
  assert.match(head, /content-type: text\/event-stream/i);
  const events = body.trim().split('\n\n').map((e) => JSON.parse(e.replace(/^data: /, '')));
  assert.ok(events.length >= 2);
  assert.deepEqual([...new Set(events.slice(0, -1).map((e) => e.type))], ['transcript.text.delta']);
  const done = events[events.length - 1];
  assert.equal(done.type, 'transcript.text.done');
  assert.equal(events.slice(0, -1).map((e) => e.delta).join(''), done.text);
  assert.match(done.text, /ask not what your country can do for you/i);
});

test('a client that leaves mid-stream aborts its job', { timeout: 300_000 }, async () => {
  const controller = new AbortController();
  const stream = await client.audio.transcriptions.create({ file: await upload(long), model: 'whisper-1', stream: true }, { signal: controller.signal });
  for await (const event of stream) {
    assert.equal(event.type, 'transcript.text.delta');
    controller.abort();
  }
  // The request's log line says how its job ended: aborted, not finished for nobody.
  const until = Date.now() + 60_000;
  const logged = () => logs.find((l) => l.msg === 'request' && l.path === '/v1/audio/transcriptions' && l.status === 499);
  while (!logged() && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  assert.equal(logged()?.errorCode, 'client_closed_request', JSON.stringify(logged()));
  assert.equal(server.services.local.scheduler.stats().running, 0);
});

test('translations: English text from German speech, in json, text and verbose_json', { timeout: 120_000 }, async () => {
  const json = await client.audio.translations.create({ file: await upload(german), model: 'whisper-1' });
  // Whether base translates espeak's German well is test/real/translations.test.ts's matter; here, that it is English.
  assert.match(json.text, /\b(the|I|to|we|with|my|because|was|is|are)\b/);
  const text = await client.audio.translations.create({ file: await upload(german), model: 'whisper-1', response_format: 'text' });
  assert.equal(text, `${json.text}\n`);
  const verbose = await client.audio.translations.create({ file: await upload(german), model: 'whisper-1', response_format: 'verbose_json' });
  assert.deepEqual([verbose.text, (verbose as { language?: string }).language], [json.text, 'english']);
});

test('errors arrive as the client\'s typed exceptions, with the contract\'s code', async () => {
  const expect = async (call: Promise<unknown>, type: new (...args: never[]) => InstanceType<typeof OpenAI.APIError>, status: number, code: string) => {
    const err = await call.then(() => null, (e) => e);
    assert.ok(err instanceof type, `${type.name}: ${err}`);
    assert.deepEqual([err.status, err.code], [status, code]);
  };
  await expect(client.audio.transcriptions.create({ file: await upload(JFK), model: 'gpt-5-transcribe' }), OpenAI.BadRequestError, 400, 'model_not_found');
  await expect(client.audio.transcriptions.create({ file: await toFile(Buffer.from('not audio'), 'x.wav'), model: 'whisper-1' }), OpenAI.BadRequestError, 400, 'invalid_audio');
  await expect(client.audio.transcriptions.create({ file: await upload(JFK), model: 'whisper-1', response_format: 'diarized_json' } as never),
    OpenAI.BadRequestError, 400, 'unsupported_value');
  await expect(client.audio.transcriptions.create({ file: await upload(JFK), model: 'whisper-1', include: ['logprobs'], response_format: 'srt' } as never),
    OpenAI.BadRequestError, 400, 'invalid_value');
  const stranger = new OpenAI({ apiKey: 'sk-stt-not-a-key', baseURL: `${server.url}/v1`, maxRetries: 0 });
  await expect(stranger.audio.transcriptions.create({ file: await upload(JFK), model: 'whisper-1' }), OpenAI.AuthenticationError, 401, 'invalid_api_key');
});

test('cloud routes stream as the provider does: its events passed on, or one delta when it does not stream', async () => {
  await admin('PUT', '/admin/routing', { mode: 'cloud', cloud: { providerId: 'oai', model: 'gpt-4o-transcribe' }, aliases: ['whisper-1'] });
  try {
    const cloud = new OpenAI({ apiKey: server.apiKey, baseURL: `${server.url}/v1`, maxRetries: 0 });
    const sent = provider.requests.length;
    const passed = await streamed(JFK, cloud);
    assert.deepEqual(passed.deltas, ['cloud', ' transcript', ' from', ' gpt-4o-transcribe']);
    assert.equal(passed.done, 'cloud transcript from gpt-4o-transcribe');
    assert.equal(provider.requests[sent].fields.stream, 'true');

    provider.streaming = 'ignored'; // as OpenAI answers for whisper-1
    assert.deepEqual((await streamed(JFK, cloud)).deltas, ['cloud transcript from gpt-4o-transcribe']);

    provider.streaming = 'refused'; // a strict compatible server: asked again without the field
    const before = provider.requests.length;
    assert.deepEqual((await streamed(JFK, cloud)).deltas, ['cloud transcript from gpt-4o-transcribe']);
    assert.deepEqual(provider.requests.slice(before).map((r) => r.fields.stream), ['true', undefined]);

    provider.streaming = 'failing'; // after the first delta: the error as the stream's last event
    const events: unknown[] = [];
    const failed = await (async () => {
      for await (const e of await cloud.audio.transcriptions.create({ file: await upload(JFK), model: 'whisper-1', stream: true })) events.push(e);
    })().then(() => null, (e) => e);
    assert.deepEqual(events, [{ type: 'transcript.text.delta', delta: 'cloud' }]);
    assert.ok(failed instanceof OpenAI.APIError, String(failed));
    assert.deepEqual([failed.code, failed.type], ['provider_error', 'upstream_error']);
    assert.equal((await fetch(`${server.url}/health`)).status, 200);
  } finally {
    provider.streaming = undefined;
    await admin('PUT', '/admin/routing', { mode: 'local', localModel: 'whisper-base', aliases: ['whisper-1'] });
  }
});

test('the Python openai client: the same calls, the same answers', { timeout: 600_000 }, async () => {
  const bin = pythonVenv('openai', PYTHON_OPENAI);
  const script = path.join(__dirname, '..', 'python', 'openai_compat.py');
  const { stdout } = await run(path.join(bin, 'python'), [script, `${server.url}/v1`, server.apiKey, JFK, german], { timeout: 300_000 });
  const py = JSON.parse(stdout);
  const json = await client.audio.transcriptions.create({ file: await upload(JFK), model: 'whisper-1' });
  assert.equal(py.json, json.text);
  assert.equal(py.text, `${json.text}\n`);
  assert.equal(py.verbose.text, json.text);
  assert.ok(py.verbose.words >= 20 && py.verbose.segments >= 1, JSON.stringify(py.verbose));
  assert.equal(py.stream.deltas.join(''), json.text);
  assert.equal(py.stream.done, json.text);
  assert.equal(py.translation, (await client.audio.translations.create({ file: await upload(german), model: 'whisper-1' })).text);
  assert.deepEqual(py.bad_model, { status: 400, code: 'model_not_found' });
  assert.deepEqual(py.bad_key, { status: 401, code: 'invalid_api_key' });
});
