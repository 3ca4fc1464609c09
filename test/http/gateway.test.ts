// The public API against the real server: every rule of the spec, the
// contract's check order, response formats, the official openai client and
// bad input.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import OpenAI, { toFile } from 'openai';
import { startTestServer, transcribe, wavBlob, type TestServer } from '../helpers/server';
import { AUDIO_DIR, writeWav, tone, readPcm16Mono } from '../../fixtures';

const JFK = readFileSync(path.join(AUDIO_DIR, 'jfk.wav'));
const JFK_PCM = readPcm16Mono(JFK).samples;
let server: TestServer;
/** What the model says for JFK in json: every other format, path and client must say the same. */
let jfkText: string;

before(async () => {
  server = await startTestServer({ routing: { mode: 'local', localModel: 'whisper-base' }, env: { STT_MAX_UPLOAD_BYTES: '1048576' } });
  assert.equal(server.services.local.status().state, 'ready');
  jfkText = (await (await transcribe(server, { file: wavBlob(JFK) }, server.auth)).json()).text;
  assert.ok(jfkText.length > 0, 'the model says something for JFK');
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
  assert.deepEqual(await res.json(), { text: jfkText, usage: { type: 'duration', seconds: 11 } }, 'jfk.wav is 11.0 s: usage in whole seconds, as OpenAI bills whisper-1');
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
  assert.equal((await server.services.apiKeys.get(k.id))!.lastUsedAt, null, 'a new key was never used');
  const sent = Date.now();
  assert.equal((await transcribe(server, { file }, { Authorization: `Bearer ${k.key}` })).status, 200);
  // Written off the request path: wait for it, bounded.
  let used: string | null = null;
  for (let i = 0; i < 200 && !used; i++) {
    used = (await server.services.apiKeys.get(k.id))!.lastUsedAt;
    if (!used) await new Promise((r) => setTimeout(r, 10));
  }
  assert.ok(used, 'lastUsedAt is recorded');
  assert.ok(Date.parse(used) >= sent && Date.parse(used) <= Date.now(), `lastUsedAt ${used} is the time of this request`);
  await server.services.apiKeys.revoke(k.id);
  await expectError(await transcribe(server, { file }, { Authorization: `Bearer ${k.key}` }), 401, 'invalid_api_key');
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

test('502 runtime_error when whisper.cpp itself fails to transcribe (a clip too short to detect its language in), then healthy', async () => {
  // No stub: the request goes through option validation, the job control, the
  // abort wiring and the addon's worker, and whisper.cpp returns an error
  // (whisper_full code -3: 40 samples, 2.5 ms, make no mel frame to detect a
  // language in; 41 samples already transcribe to ""): the only deterministic
  // inference failure found in whisper.cpp for a model file that loads.
  const wav = writeWav({ rate: 16000, encoding: 'pcm_s16', channels: [JFK_PCM.subarray(0, 40)] });
  const res = await transcribe(server, { file: wavBlob(wav) }, server.auth);
  const body = await res.json();
  assert.equal(res.status, 502, JSON.stringify(body));
  assert.equal(body.error.code, 'runtime_error');
  assert.equal(body.error.type, 'upstream_error');
  assert.doesNotMatch(JSON.stringify(body), /whisper|code -\d|\/work|\.bin/, 'no internal detail leaks');
  await healthy();
});

function assertIncreasing(times: [number, number][]): void {
  let last = 0;
  for (const [s, e] of times) {
    assert.ok(s >= last && e >= s, `${s} -> ${e} after ${last}`);
    last = e;
  }
}

/** HH:MM:SS,mmm (SRT) or HH:MM:SS.mmm (WebVTT), written here independently of src/stt/formats.ts. */
function clock(seconds: number, separator: ',' | '.'): string {
  const ms = Math.round(seconds * 1000);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(Math.floor(ms / 3_600_000))}:${two(Math.floor(ms / 60_000) % 60)}:${two(Math.floor(ms / 1000) % 60)}${separator}${String(ms % 1000).padStart(3, '0')}`;
}

test('response formats have OpenAI shapes and all carry the same transcript; SRT and VTT cues are the segments', async () => {
  const json = await transcribe(server, { file: wavBlob(JFK), response_format: 'json' }, server.auth);
  assert.match(json.headers.get('content-type')!, /^application\/json/);
  assert.deepEqual(await json.json(), { text: jfkText, usage: { type: 'duration', seconds: 11 } });

  const text = await transcribe(server, { file: wavBlob(JFK), response_format: 'text' }, server.auth);
  assert.equal(text.headers.get('content-type'), 'text/plain; charset=utf-8');
  assert.equal(await text.text(), `${jfkText}\n`);

  const verbose = await (await transcribe(server, { file: wavBlob(JFK), response_format: 'verbose_json', 'timestamp_granularities[]': ['segment', 'word'] }, server.auth)).json();
  assert.deepEqual(Object.keys(verbose), ['task', 'language', 'duration', 'text', 'segments', 'words', 'usage']);
  assert.equal(verbose.task, 'transcribe');
  assert.equal(verbose.duration, 11);
  // Detected (random weights need not say English): a name as OpenAI gives it, not a code.
  assert.match(verbose.language, /^[a-z]{3,}( [a-z]+)*$/);
  assert.equal(verbose.text, jfkText);
  assert.ok(verbose.segments.length > 0, 'segments were asked for');
  assert.ok(verbose.words.length > 0, 'words were asked for');
  verbose.segments.forEach((s: Record<string, unknown>, i: number) => {
    assert.deepEqual(Object.keys(s), ['id', 'seek', 'start', 'end', 'text', 'tokens', 'temperature', 'avg_logprob', 'compression_ratio', 'no_speech_prob']);
    assert.equal(s.id, i);
    assert.ok(Array.isArray(s.tokens) && s.tokens.length > 0, `segment ${i} has its tokens`);
  });
  assert.equal(verbose.segments.map((s: { text: string }) => s.text).join('').trim(), jfkText, 'the segments make up the text');
  assertIncreasing(verbose.segments.map((s: { start: number; end: number }) => [s.start, s.end]));
  assertIncreasing(verbose.words.map((w: { start: number; end: number }) => [w.start, w.end]));
  assert.ok(verbose.segments.at(-1).end <= verbose.duration);
  const segmentsOnly = await (await transcribe(server, { file: wavBlob(JFK), response_format: 'verbose_json' }, server.auth)).json();
  assert.deepEqual(segmentsOnly, { task: 'transcribe', language: verbose.language, duration: 11, text: jfkText, segments: verbose.segments, usage: { type: 'duration', seconds: 11 } }, 'segment granularity alone: no words');

  // One cue per segment (these have text and length), numbered from 1 (SRT), with the segment's
  // times and trimmed text, each followed by a blank line.
  const cues = (sep: ',' | '.', numbered: boolean) => segmentsOnly.segments
    .map((s: { start: number; end: number; text: string }, i: number) => `${numbered ? `${i + 1}\n` : ''}${clock(s.start, sep)} --> ${clock(s.end, sep)}\n${s.text.trim()}\n\n`)
    .join('');
  const srt = await transcribe(server, { file: wavBlob(JFK), response_format: 'srt' }, server.auth);
  assert.equal(srt.headers.get('content-type'), 'application/x-subrip; charset=utf-8');
  assert.equal(await srt.text(), cues(',', true));
  const vtt = await transcribe(server, { file: wavBlob(JFK), response_format: 'vtt' }, server.auth);
  assert.equal(vtt.headers.get('content-type'), 'text/vtt; charset=utf-8');
  assert.equal(await vtt.text(), `WEBVTT\n\n${cues('.', false)}`);
});

test('the official openai client transcribes (json and text)', async () => {
  const client = new OpenAI({ apiKey: server.apiKey, baseURL: `${server.url}/v1` });
  const json = await client.audio.transcriptions.create({ file: await toFile(JFK, 'jfk.wav'), model: 'service-local-stt' });
  assert.equal(json.text, jfkText);
  const text = await client.audio.transcriptions.create({ file: await toFile(JFK, 'jfk.wav'), model: 'service-local-stt', response_format: 'text' });
  assert.equal(text, `${jfkText}\n`);
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
    [{ file: wavBlob(JFK), stream: 'yes' }, 400, 'invalid_value', 'stream'],
    [{ file: wavBlob(JFK), response_format: 'diarized_json' }, 400, 'unsupported_value', 'response_format'],
    [{ file: wavBlob(JFK), 'include[]': 'logprobs', response_format: 'srt' }, 400, 'invalid_value', 'include[]'],
    [{ file: wavBlob(JFK), 'known_speaker_names[]': 'agent' }, 400, 'unsupported_parameter', 'known_speaker_names[]'],
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
