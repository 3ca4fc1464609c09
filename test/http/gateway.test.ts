// The public API against the real server: every rule of the spec, the
// contract's check order, response formats, the official openai client and
// bad input.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import OpenAI, { toFile } from 'openai';
import { Model } from '../../src/native';
import { startTestServer, transcribe, wavBlob, type TestServer } from '../helpers/server';
import { AUDIO_DIR } from '../helpers/paths';
import { writeWav, tone, readPcm16Mono } from '../helpers/wav-writer';

const JFK = readFileSync(path.join(AUDIO_DIR, 'jfk.wav'));
const JFK_PCM = readPcm16Mono(JFK).samples;
let server: TestServer;

before(async () => {
  server = await startTestServer({ routing: { mode: 'local', localModel: 'whisper-base' }, env: { STT_MAX_UPLOAD_BYTES: '1048576' } });
  assert.equal(server.services.local.status().state, 'ready');
});
after(() => server.close());

async function expectError(res: Response, status: number, code: string, param?: string | null): Promise<void> {
  const body = await res.json();
  assert.equal(res.status, status, JSON.stringify(body));
  assert.equal(body.error.code, code);
  assert.equal(typeof body.error.message, 'string');
  assert.ok(['invalid_request_error', 'authentication_error', 'rate_limit_error', 'server_error', 'upstream_error'].includes(body.error.type));
  if (param !== undefined) assert.equal(body.error.param, param);
}

async function healthy(): Promise<void> {
  const res = await transcribe(server, { file: wavBlob(JFK) }, server.auth);
  assert.equal(res.status, 200);
  assert.equal(typeof (await res.json()).text, 'string');
}

test('GET /health: UUID serviceId, semver version, the local alias', async () => {
  const body = await (await fetch(`${server.url}/health`)).json();
  assert.match(body.serviceId, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  assert.match(body.version, /^\d+\.\d+\.\d+$/);
  assert.equal(body.publicModel, 'service-local-stt');
});

test('GET /v1/models lists service-local-stt and needs an API key', async () => {
  const res = await fetch(`${server.url}/v1/models`, { headers: server.auth });
  assert.deepEqual(await res.json(), { object: 'list', data: [{ id: 'service-local-stt', object: 'model', created: 0, owned_by: 'service' }] });
  await expectError(await fetch(`${server.url}/v1/models`), 401, 'invalid_api_key');
});

test('401 for missing, malformed, unknown and revoked keys, and for the admin key', async () => {
  const file = wavBlob(JFK);
  await expectError(await transcribe(server, { file }), 401, 'invalid_api_key');
  await expectError(await transcribe(server, { file }, { Authorization: 'Basic abc' }), 401, 'invalid_api_key');
  await expectError(await transcribe(server, { file }, { Authorization: 'Bearer' }), 401, 'invalid_api_key');
  await expectError(await transcribe(server, { file }, { Authorization: 'Bearer sk-stt-unknownunknownunknownunknown' }), 401, 'invalid_api_key');
  await expectError(await transcribe(server, { file }, { Authorization: `Bearer ${server.adminKey}` }), 401, 'invalid_api_key');
  const k = await server.services.apiKeys.create('to revoke');
  assert.equal((await transcribe(server, { file }, { Authorization: `Bearer ${k.key}` })).status, 200);
  await server.services.apiKeys.revoke(k.id);
  await expectError(await transcribe(server, { file }, { Authorization: `Bearer ${k.key}` }), 401, 'invalid_api_key');
  const [first] = await server.services.apiKeys.list();
  assert.ok(first.lastUsedAt, 'lastUsedAt is recorded');
});

test("the contract's check order: 401 > 413 > missing_file > model > response_format > language > invalid_audio", async () => {
  const big = Buffer.alloc(2 * 1024 * 1024, 1);
  await expectError(await transcribe(server, { file: wavBlob(big), model: 'nope' }), 401, 'invalid_api_key');
  await expectError(await transcribe(server, { file: wavBlob(big), model: 'nope' }, server.auth), 413, 'file_too_large', 'file');
  await expectError(await transcribe(server, { model: 'nope', response_format: 'xml' }, server.auth), 400, 'missing_file', 'file');
  await expectError(await transcribe(server, { file: wavBlob(Buffer.from('junk')), model: 'whisper-1', response_format: 'xml' }, server.auth), 400, 'model_not_found', 'model');
  await expectError(await transcribe(server, { file: wavBlob(Buffer.from('junk')), response_format: 'xml', language: 'xx' }, server.auth), 400, 'invalid_response_format', 'response_format');
  await expectError(await transcribe(server, { file: wavBlob(Buffer.from('junk')), language: 'xx' }, server.auth), 400, 'unsupported_language', 'language');
  await expectError(await transcribe(server, { file: wavBlob(Buffer.from('junk')), language: 'en' }, server.auth), 400, 'invalid_audio', 'file');
});

test('502 runtime_error when the runtime fails to transcribe (injected failure), then healthy', async () => {
  const original = Model.prototype.transcribe;
  Model.prototype.transcribe = async () => {
    throw Object.assign(new Error('injected inference failure'), { code: 'runtime_error' });
  };
  try {
    const res = await transcribe(server, { file: wavBlob(JFK) }, server.auth);
    const body = await res.json();
    assert.equal(res.status, 502);
    assert.equal(body.error.code, 'runtime_error');
    assert.equal(body.error.type, 'upstream_error');
    assert.doesNotMatch(JSON.stringify(body), /injected|\/work|\.bin/, 'no internal detail leaks');
  } finally {
    Model.prototype.transcribe = original;
  }
  await healthy();
});

function assertIncreasing(times: [number, number][]): void {
  let last = 0;
  for (const [s, e] of times) {
    assert.ok(s >= last && e >= s, `${s} -> ${e} after ${last}`);
    last = e;
  }
}

const parseClock = (c: string) => {
  const m = /^(\d{2}):(\d{2}):(\d{2})[.,](\d{3})$/.exec(c);
  assert.ok(m, `bad timestamp ${c}`);
  return +m[1] * 3600 + +m[2] * 60 + +m[3] + +m[4] / 1000;
};

test('response formats have OpenAI shapes and well-formed increasing timestamps', async () => {
  const json = await transcribe(server, { file: wavBlob(JFK), response_format: 'json' }, server.auth);
  assert.match(json.headers.get('content-type')!, /^application\/json/);
  assert.deepEqual(Object.keys(await json.json()), ['text']);

  const text = await transcribe(server, { file: wavBlob(JFK), response_format: 'text' }, server.auth);
  assert.equal(text.headers.get('content-type'), 'text/plain; charset=utf-8');
  assert.equal(typeof (await text.text()), 'string');

  const srt = await (await transcribe(server, { file: wavBlob(JFK), response_format: 'srt' }, server.auth)).text();
  const srtBlocks = srt.trim().split(/\n\n/);
  assert.ok(srtBlocks.length >= 1);
  assertIncreasing(srtBlocks.map((b, i) => {
    const [n, times] = b.split('\n');
    assert.equal(n, String(i + 1));
    const [a, z] = times.split(' --> ');
    return [parseClock(a), parseClock(z)];
  }));

  const vtt = await (await transcribe(server, { file: wavBlob(JFK), response_format: 'vtt' }, server.auth)).text();
  assert.ok(vtt.startsWith('WEBVTT\n\n'));
  assertIncreasing(vtt.slice(8).trim().split(/\n\n/).map((b) => {
    const [a, z] = b.split('\n')[0].split(' --> ');
    return [parseClock(a), parseClock(z)];
  }));

  const verbose = await (await transcribe(server, { file: wavBlob(JFK), response_format: 'verbose_json', 'timestamp_granularities[]': ['segment', 'word'] }, server.auth)).json();
  assert.equal(verbose.task, 'transcribe');
  assert.equal(verbose.duration, 11);
  assert.equal(typeof verbose.language, 'string');
  for (const s of verbose.segments) {
    for (const k of ['id', 'seek', 'start', 'end', 'text', 'tokens', 'temperature', 'avg_logprob', 'compression_ratio', 'no_speech_prob']) assert.ok(k in s, k);
  }
  assertIncreasing(verbose.segments.map((s: { start: number; end: number }) => [s.start, s.end]));
  assertIncreasing(verbose.words.map((w: { start: number; end: number }) => [w.start, w.end]));
  assert.ok(verbose.segments.every((s: { end: number }) => s.end <= verbose.duration));
});

test('the official openai client transcribes (json and text)', async () => {
  const client = new OpenAI({ apiKey: server.apiKey, baseURL: `${server.url}/v1` });
  const json = await client.audio.transcriptions.create({ file: await toFile(JFK, 'jfk.wav'), model: 'service-local-stt' });
  assert.equal(typeof json.text, 'string');
  const text = await client.audio.transcriptions.create({ file: await toFile(JFK, 'jfk.wav'), model: 'service-local-stt', response_format: 'text' });
  assert.equal(typeof text, 'string');
  const models = await client.models.list();
  assert.deepEqual(models.data.map((m) => m.id), ['service-local-stt']);
  await assert.rejects(
    client.audio.transcriptions.create({ file: await toFile(JFK, 'jfk.wav'), model: 'whisper-1' }),
    (e: { status?: number }) => e.status === 400,
  );
});

test('bad input gets a clear 4xx and the service stays healthy', async () => {
  const raw = readFileSync(path.join(AUDIO_DIR, 'pocketsphinx_testdata', 'numbers.raw'));
  const cases: [Record<string, string | Blob | (string | Blob)[]>, number, string, string | null][] = [
    [{ file: wavBlob(Buffer.from('{"not": "audio"}')) }, 400, 'invalid_audio', 'file'],
    [{ file: wavBlob(raw) }, 400, 'invalid_audio', 'file'],
    [{ file: wavBlob(JFK.subarray(0, 30)) }, 400, 'invalid_audio', 'file'],
    [{ file: wavBlob(Buffer.alloc(0)) }, 400, 'invalid_audio', 'file'],
    [{ file: 'just text' }, 400, 'invalid_type', 'file'],
    [{ file: wavBlob(JFK), temperature: 'hot' }, 400, 'invalid_value', 'temperature'],
    [{ file: wavBlob(JFK), temperature: '3' }, 400, 'invalid_value', 'temperature'],
    [{ file: wavBlob(JFK), stream: 'true' }, 400, 'unknown_parameter', 'stream'],
    [{ file: wavBlob(JFK), model: ['service-local-stt', 'service-local-stt'] }, 400, 'duplicate_field', 'model'],
    [{ file: [wavBlob(JFK), wavBlob(JFK)] }, 400, 'duplicate_field', 'file'],
    [{ file: wavBlob(JFK), 'timestamp_granularities[]': 'word' }, 400, 'invalid_value', 'timestamp_granularities[]'],
    [{ file: wavBlob(JFK), response_format: 'verbose_json', 'timestamp_granularities[]': 'char' }, 400, 'invalid_value', 'timestamp_granularities[]'],
    [{ file: wavBlob(writeWav({ rate: 4000, encoding: 'pcm_s16', channels: [tone(440, 4000, 1)] })) }, 400, 'invalid_audio', 'file'],
  ];
  for (const [fields, status, code, param] of cases) await expectError(await transcribe(server, fields, server.auth), status, code, param);
  const notMultipart = await fetch(`${server.url}/v1/audio/transcriptions`, { method: 'POST', headers: { ...server.auth, 'Content-Type': 'application/json' }, body: '{}' });
  await expectError(notMultipart, 415, 'unsupported_media_type');
  await expectError(await fetch(`${server.url}/v1/nothing`, { headers: server.auth }), 404, 'not_found');
  await healthy();
});

test('an oversize body without Content-Length is cut off with 413 while it streams', async () => {
  const boundary = 'XBOUNDARYX';
  const url = new URL(server.url);
  const status = await new Promise<number>((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method: 'POST', path: '/v1/audio/transcriptions',
      headers: { ...server.auth, 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Transfer-Encoding': 'chunked' } });
    req.on('response', (res) => { res.resume(); resolve(res.statusCode!); });
    req.on('error', reject);
    req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`);
    let sent = 0;
    const chunk = Buffer.alloc(64 * 1024, 7);
    // Keep sending up to 8x the limit; the server must answer long before the end.
    const pump = () => {
      while (sent < 8 * 1024 * 1024) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end(`\r\n--${boundary}--\r\n`);
    };
    pump();
  });
  assert.equal(status, 413);
  await healthy();
});

test('502 no_active_model in Local mode with no runtime, and /v1/models is empty', async () => {
  const idle = await startTestServer({ routing: { mode: 'local', localModel: null } });
  try {
    assert.deepEqual(await (await fetch(`${idle.url}/v1/models`, { headers: idle.auth })).json(), { object: 'list', data: [] });
    await expectError(await transcribe(idle, { file: wavBlob(JFK) }, idle.auth), 502, 'no_active_model');
  } finally {
    await idle.close();
  }
});

test('a clip whose length is not a whole number of milliseconds per deadline unit is transcribed (deadline in whole ms)', async () => {
  // 17,528 samples = 1.0955 s: 60000 + 1.0955 × 3000 ms is a fraction, which AbortSignal.timeout refuses (was a 500).
  const wav = writeWav({ rate: 16000, encoding: 'pcm_s16', channels: [JFK_PCM.subarray(0, 17528)] });
  const res = await transcribe(server, { file: wavBlob(wav) }, server.auth);
  assert.equal(res.status, 200, await res.clone().text());
  await healthy();
});
