// HTTP details against the real server: 405 with Allow, unparseable multipart,
// the admin JSON limits, X-Request-Id, the per-request deadline, and prompt
// and temperature reaching whisper.cpp (parity with whisper-cli) or being
// refused by Parakeet.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startTestServer, transcribe, wavBlob, type TestServer } from '../helpers/server';
import { AUDIO_DIR, speechClip, makeWhisperModel, serverWindowArgs, textTokens, whisperCli } from '../../fixtures';

const JFK_PATH = path.join(AUDIO_DIR, 'jfk.wav');
const JFK = readFileSync(JFK_PATH);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
let server: TestServer;
const logs: Record<string, unknown>[] = [];
let admin: { Authorization: string };

before(async () => {
  server = await startTestServer({ routing: { mode: 'local', localModel: 'whisper-base' }, logs });
  admin = { Authorization: `Bearer ${server.adminKey}` };
});
after(() => server.close());

async function expectError(res: Response, status: number, code: string, type = 'invalid_request_error', what = ''): Promise<void> {
  const body = await res.json();
  assert.equal(res.status, status, `${what} ${JSON.stringify(body)}`);
  assert.deepEqual(Object.keys(body.error), ['message', 'type', 'param', 'code']);
  assert.equal(body.error.code, code);
  assert.equal(body.error.type, type);
  assert.equal(body.error.param, null);
  assert.equal(typeof body.error.message, 'string');
}

const allowOf = (res: Response) => (res.headers.get('allow') ?? '').split(/,\s*/).filter(Boolean).sort();

test('405 method_not_allowed in the envelope, with the Allow header a 405 must carry', async () => {
  const cases: [string, string, Record<string, string>, string[]][] = [
    ['DELETE', '/v1/models', server.auth, ['GET', 'HEAD', 'OPTIONS']],
    ['GET', '/v1/audio/transcriptions', server.auth, ['OPTIONS', 'POST']],
    ['PUT', '/admin/status', admin, ['GET', 'HEAD', 'OPTIONS']],
    ['DELETE', '/admin/routing', admin, ['GET', 'HEAD', 'OPTIONS', 'PUT']],
  ];
  for (const [method, route, headers, allowed] of cases) {
    const res = await fetch(`${server.url}${route}`, { method, headers });
    assert.deepEqual(allowOf(res), allowed, `${method} ${route}`);
    await expectError(res, 405, 'method_not_allowed');
  }
});

test('invalid_multipart for a multipart body that cannot be parsed', async () => {
  const post = (contentType: string, body: string) =>
    fetch(`${server.url}/v1/audio/transcriptions`, { method: 'POST', headers: { ...server.auth, 'Content-Type': contentType }, body });
  const part = (boundary: string) => `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\nRIFF`;
  const cases: [string, string, string][] = [
    ['no boundary parameter', 'multipart/form-data', `${part('XYZ')}\r\n--XYZ--\r\n`],
    ['garbage', 'multipart/form-data; boundary=XYZ', 'this is not a multipart body at all'],
    ['framed with another boundary', 'multipart/form-data; boundary=XYZ', `${part('ABC')}\r\n--ABC--\r\n`],
    ['a part that never ends', 'multipart/form-data; boundary=XYZ', part('XYZ')],
  ];
  for (const [what, contentType, body] of cases) {
    await expectError(await post(contentType, body), 400, 'invalid_multipart', 'invalid_request_error', what);
  }
});

test('a part with a filename is a file without a Content-Type too (RFC 7578): transcribed, not read as a text field', async () => {
  const boundary = 'stt-no-type';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nservice-local-stt\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="jfk.wav"\r\n\r\n`),
    JFK,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const res = await fetch(`${server.url}/v1/audio/transcriptions`, { method: 'POST', headers: { ...server.auth, 'Content-Type': `multipart/form-data; boundary=${boundary}` }, body });
  const answer = await res.json();
  assert.equal(res.status, 200, JSON.stringify(answer));
  assert.equal(answer.text, (await (await transcribe(server, { file: wavBlob(JFK) }, server.auth)).json()).text);
  // Without a filename it is still a text field, and the file is missing.
  const field = Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"\r\n\r\n`), Buffer.from('RIFF'), Buffer.from(`\r\n--${boundary}--\r\n`)]);
  const refused = await fetch(`${server.url}/v1/audio/transcriptions`, { method: 'POST', headers: { ...server.auth, 'Content-Type': `multipart/form-data; boundary=${boundary}` }, body: field });
  assert.equal(refused.status, 400, await refused.text());
});

test('admin JSON routes: 413 body_too_large over 64 KiB and 415 for a non-JSON body, with nothing applied', async () => {
  const routing = async () => (await fetch(`${server.url}/admin/routing`, { headers: admin })).json();
  const keys = async () => (await (await fetch(`${server.url}/admin/api-keys`, { headers: admin })).json()).data.length;
  const [routingBefore, keysBefore] = [await routing(), await keys()];
  const json = { ...admin, 'Content-Type': 'application/json' };
  // A valid change to an installed runtime: only its size (trailing blanks) is wrong.
  const oversize = JSON.stringify({ mode: 'local', localModel: 'whisper-small' }) + ' '.repeat(70 * 1024);
  await expectError(await fetch(`${server.url}/admin/routing`, { method: 'PUT', headers: json, body: oversize }), 413, 'body_too_large');
  await expectError(await fetch(`${server.url}/admin/api-keys`, { method: 'POST', headers: json, body: JSON.stringify({ name: 'x'.repeat(70 * 1024) }) }), 413, 'body_too_large');
  const asText = { ...admin, 'Content-Type': 'text/plain' };
  await expectError(await fetch(`${server.url}/admin/routing`, { method: 'PUT', headers: asText, body: JSON.stringify({ localModel: 'whisper-small' }) }), 415, 'unsupported_media_type');
  const form = { ...admin, 'Content-Type': 'application/x-www-form-urlencoded' };
  await expectError(await fetch(`${server.url}/admin/api-keys`, { method: 'POST', headers: form, body: 'name=sneaky' }), 415, 'unsupported_media_type');
  assert.deepEqual(await routing(), routingBefore);
  assert.equal(await keys(), keysBefore);
  // The same change as JSON of a normal size is accepted: the refusals were about the body, not the change.
  const ok = await fetch(`${server.url}/admin/api-keys`, { method: 'POST', headers: json, body: JSON.stringify({ name: 'sized-right' }) });
  assert.equal(ok.status, 201);
  assert.equal(await keys(), keysBefore + 1);
});

test('X-Request-Id: every answer carries one, a well-formed client id is echoed (and logged), anything else is replaced', async () => {
  const idOf = async (route: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.url}${route}`, { headers });
    await res.arrayBuffer();
    return res.headers.get('x-request-id');
  };
  const a = await idOf('/health');
  const b = await idOf('/health');
  assert.match(a!, UUID);
  assert.match(b!, UUID);
  assert.notEqual(a, b);

  assert.equal(await idOf('/health', { 'X-Request-Id': 'client-trace_01.a' }), 'client-trace_01.a');
  // Error answers too: a 401 (no key) and a 404.
  assert.equal(await idOf('/v1/models', { 'X-Request-Id': 'client-trace_02' }), 'client-trace_02');
  assert.equal(await idOf('/nowhere', { 'X-Request-Id': 'client-trace_03' }), 'client-trace_03');
  // The id ties the answer to its log line.
  const line = logs.find((l) => l.msg === 'request' && l.requestId === 'client-trace_02');
  assert.ok(line, 'the request log line carries the client id');
  assert.equal(line.status, 401);

  for (const bad of ['has space', 'a'.repeat(65), 'semi;colon', 'quote"d', '']) {
    const id = await idOf('/health', { 'X-Request-Id': bad });
    assert.match(id!, UUID, JSON.stringify(bad));
  }
});

test('504 deadline_exceeded when the deadline passes: the job is aborted and the next request is served', async () => {
  // 100 ms (the smallest STT_DEADLINE_BASE_MS) for a 60-s clip, which takes
  // the tiny shape seconds (its random weights decode many short windows).
  const s = await startTestServer({ whisper: 'tiny-f16', routing: { mode: 'local', localModel: 'whisper-base' },
    env: { STT_DEADLINE_BASE_MS: '100', STT_DEADLINE_PER_AUDIO_SECOND_MS: '0' } });
  try {
    await expectError(await transcribe(s, { file: wavBlob(speechClip(60)) }, s.auth), 504, 'deadline_exceeded', 'server_error');
    // The scheduler lets go of a started job only when its native call has
    // returned, and that was before the 504 was sent: nothing is left computing.
    const { running, paused, waiting } = s.services.local.scheduler.stats();
    assert.deepEqual({ running, paused, waiting }, { running: 0, paused: 0, waiting: 0 });
    const metrics = await (await fetch(`${s.url}/metrics`, { headers: { Authorization: `Bearer ${s.adminKey}` } })).text();
    assert.match(metrics, /^stt_aborts_total\{reason="deadline"\} 1$/m, 'counted as a deadline abort');
    // The route reads the deadline per request: the next one gets the default,
    // so it is not bound by how fast this machine is.
    s.services.config.deadlineBaseMs = 60_000;
    const next = await transcribe(s, { file: wavBlob(JFK) }, s.auth);
    assert.equal(next.status, 200);
    assert.equal(typeof (await next.json()).text, 'string');
  } finally {
    await s.close();
  }
});

// Prompt and temperature: the tiny shape says several tokens per clip where
// micro says one, and no token cap, since whisper-cli has none. They run in
// the full window (in a window of 768 the random weights said one token for
// this clip with the prompt); the window has its own test.
async function tinyServer(env: Record<string, string> = {}): Promise<TestServer> {
  return startTestServer({ whisper: 'tiny-f16', routing: { mode: 'local', localModel: 'whisper-base' }, env: { STT_MAX_TOKENS: '0', ...env } });
}
const FULL_WINDOW = { STT_ENCODER_WINDOW: 'full' };

async function decode(s: TestServer, fields: Record<string, string>): Promise<{ tokens: number[]; text: string; temperatures: number[] }> {
  const res = await transcribe(s, { file: wavBlob(JFK), language: 'en', response_format: 'verbose_json', ...fields }, s.auth);
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  const segments = body.segments as { tokens: number[]; temperature: number }[];
  // verbose_json carries Whisper's timestamp tokens too; whisper-cli's reference holds the text tokens.
  return { tokens: segments.flatMap((x) => textTokens(x.tokens)), text: body.text, temperatures: segments.map((x) => x.temperature) };
}

test("the encoder window reaches whisper.cpp: with STT_ENCODER_WINDOW=tail the clip's and 5 s more, as whisper-cli -ac gives it; by default the whole 30 s", async () => {
  const model = await makeWhisperModel('tiny-f16');
  const windowed = await whisperCli(model, JFK_PATH, 2, serverWindowArgs(JFK_PATH, 'tail'));
  const full = await whisperCli(model, JFK_PATH, 2);
  assert.deepEqual(serverWindowArgs(JFK_PATH, 'tail'), ['-ac', '1024'], 'an 11-s clip and 5 s: four blocks of 256');
  assert.deepEqual(serverWindowArgs(JFK_PATH), ['-ac', '0'], 'the default: the full window');
  assert.notDeepEqual(windowed.tokens, full.tokens, 'the two windows decode this clip differently, so the comparison can fail');
  const s = await tinyServer({ STT_ENCODER_WINDOW: 'tail' });
  try {
    assert.deepEqual((await decode(s, {})).tokens, windowed.tokens);
  } finally {
    await s.close();
  }
  const fullServer = await tinyServer();
  try {
    assert.deepEqual((await decode(fullServer, {})).tokens, full.tokens);
  } finally {
    await fullServer.close();
  }
});

test("prompt reaches whisper.cpp: the tokens are whisper-cli's with the same --prompt, and differ from no prompt", async () => {
  const s = await tinyServer(FULL_WINDOW);
  try {
    const prompt = 'Kennedy';
    const ours = await decode(s, { prompt });
    const cli = await whisperCli(await makeWhisperModel('tiny-f16'), JFK_PATH, 2, ['--prompt', prompt]);
    assert.ok(cli.tokens.length > 1, 'the reference says several tokens');
    assert.deepEqual(ours.tokens, cli.tokens);
    assert.equal(ours.text, cli.text.trim());
    assert.notDeepEqual((await decode(s, {})).tokens, ours.tokens, 'the prompt changes what this model says for this clip');
  } finally {
    await s.close();
  }
});

test("temperature reaches whisper.cpp: at 0.4 without fallback the tokens are whisper-cli's at --temperature 0.4, not the greedy ones", async () => {
  // whisper.cpp seeds the first decoder's sampler once per state, and each
  // sampled request moves it on: only a state's first sampled request
  // matches a fresh whisper-cli, so this server is fresh and this is its first.
  const s = await tinyServer(FULL_WINDOW);
  try {
    const sampled = await decode(s, { temperature: '0.4' });
    const cli = await whisperCli(await makeWhisperModel('tiny-f16'), JFK_PATH, 2, ['--temperature', '0.4']);
    assert.ok(cli.tokens.length > 0);
    assert.deepEqual(sampled.tokens, cli.tokens);
    assert.equal(sampled.text, cli.text.trim());
    assert.ok(sampled.temperatures.every((t) => t === 0.4), 'verbose_json reports the temperature');
    assert.notDeepEqual((await decode(s, {})).tokens, sampled.tokens, 'sampling at 0.4 says something else than greedy decoding');
  } finally {
    await s.close();
  }
});

test('Parakeet (the real runtime) refuses a prompt with 400 unsupported_parameter and serves the request without it', async () => {
  const s = await startTestServer({ routing: { mode: 'local', localModel: 'parakeet-tdt-0.6b-v3' } });
  try {
    assert.equal(s.services.local.status().activeModel, 'parakeet-tdt-0.6b-v3');
    const clip = wavBlob(speechClip(1)); // the random Parakeet fixture is slow on long clips
    const refused = await transcribe(s, { file: clip, prompt: 'Kennedy' }, s.auth);
    const body = await refused.json();
    assert.equal(refused.status, 400, JSON.stringify(body));
    assert.deepEqual(body.error, { message: body.error.message, type: 'invalid_request_error', param: 'prompt', code: 'unsupported_parameter' });
    const served = await transcribe(s, { file: clip }, s.auth);
    assert.equal(served.status, 200);
    assert.equal(typeof (await served.json()).text, 'string');
  } finally {
    await s.close();
  }
});
