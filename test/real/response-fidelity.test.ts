// verbose_json values as Whisper defines them, on real base weights where the
// value depends on decoding: a segment's seek (its 30-s window in frames),
// its tokens with the timestamp tokens around the text, the temperature its
// window was decoded at, and compression_ratio by Whisper's own formula
// (computed here by Python's zlib, as Whisper does). Subtitles of real output
// pass the npm registry's validators; GET /v1/models/{id} serves the SDK.
// seek against whisper-cli's own progress, with a dropped opening timestamp:
// test/native/model.test.ts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import OpenAI from 'openai';
import { parseSync } from 'subtitle';
import { startTestServer, transcribe, wavBlob, type TestServer } from '../helpers/server';
import { startRealServer } from '../helpers/real-models';
import { longClip, AUDIO_DIR, speechClip, WHISPER_EOT } from '../../fixtures';

const JFK = readFileSync(path.join(AUDIO_DIR, 'jfk.wav'));
const TIMESTAMP_BEGIN = 50364;
let server: TestServer;

before(async () => {
  server = await startRealServer('base-q8_0');
});
after(() => server.close());

interface VerboseSegment { seek: number; start: number; end: number; text: string; tokens: number[]; temperature: number; compression_ratio: number }

async function verbose(s: TestServer, wav: Buffer, fields: Record<string, string> = {}): Promise<{ segments: VerboseSegment[]; duration: number }> {
  const res = await transcribe(s, { file: wavBlob(wav), response_format: 'verbose_json', language: 'en', ...fields }, s.auth);
  assert.equal(res.status, 200);
  return res.json();
}

/** Whisper's compression_ratio, by Whisper's code path: Python's zlib.compress. */
function whisperCompressionRatios(texts: string[]): number[] {
  const program = 'import json, sys, zlib\nfor t in json.load(sys.stdin):\n  b = t.strip().encode("utf-8")\n  print(round(len(b) / len(zlib.compress(b)), 3))';
  return execFileSync('python3', ['-c', program], { input: JSON.stringify(texts), encoding: 'utf8' }).trim().split('\n').map(Number);
}

test('a 45-s clip: seek is each window\'s start in frames, tokens carry their timestamps, compression_ratio is its window\'s by Whisper\'s formula', { timeout: 300_000 }, async () => {
  const { segments } = await verbose(server, longClip(45).wav);
  const seeks = segments.map((x) => x.seek);
  assert.equal(seeks[0], 0);
  assert.ok(seeks.some((x) => x > 0), `a second window with its own seek: ${seeks}`);
  assert.deepEqual(seeks, [...seeks].sort((a, b) => a - b), 'windows in order');
  for (const x of segments) {
    const [first, last] = [x.tokens[0], x.tokens[x.tokens.length - 1]];
    assert.ok(first >= TIMESTAMP_BEGIN, `segment at ${x.start} s opens with a timestamp token: ${x.tokens}`);
    assert.ok(x.tokens.slice(1, -1).every((t) => t < WHISPER_EOT), 'text tokens between them');
    // <|t|> in the window that starts at seek means seek / 100 + t seconds (t in steps of 20 ms).
    assert.ok(Math.abs(x.start - (x.seek + 2 * (first - TIMESTAMP_BEGIN)) / 100) < 0.011, `start ${x.start} from seek ${x.seek} and ${first}`);
    if (last >= TIMESTAMP_BEGIN) assert.ok(Math.abs(x.end - (x.seek + 2 * (last - TIMESTAMP_BEGIN)) / 100) < 0.011, `end ${x.end} from seek ${x.seek} and ${last}`);
    assert.ok(x.seek / 100 <= x.start, 'a segment starts inside its window');
  }
  // Whisper gives every segment of a window the ratio of the window's whole text.
  const windows = [...new Set(seeks)];
  const expected = whisperCompressionRatios(windows.map((w) => segments.filter((x) => x.seek === w).map((x) => x.text).join('')));
  assert.deepEqual(segments.map((x) => x.compression_ratio), segments.map((x) => expected[windows.indexOf(x.seek)]));
});

test('JFK: tokens from <|0.00|> to the closing timestamp, as OpenAI shows them; temperature is the one decoded at', async () => {
  const { segments } = await verbose(server, JFK);
  assert.equal(segments[0].tokens[0], TIMESTAMP_BEGIN);
  assert.deepEqual(segments.map((x) => x.temperature), segments.map(() => 0));
  const warm = await verbose(server, JFK, { temperature: '0.2' });
  assert.deepEqual(warm.segments.map((x) => x.temperature), warm.segments.map(() => 0.2), 'fallback off: the requested temperature');
});

test('with the fallback on, a window that fails at temperature 0 reports the temperature it was decoded at', async () => {
  // Random weights never pass the log-probability threshold: every window climbs whisper.cpp's ladder to 1.0.
  const random = await startTestServer({ whisper: 'micro-f16', routing: { mode: 'local', localModel: 'whisper-base' }, env: { STT_TEMPERATURE_FALLBACK: 'true', STT_MAX_TOKENS: '4' } });
  try {
    const { segments } = await verbose(random, speechClip(4));
    assert.ok(segments.length > 0);
    assert.deepEqual(segments.map((x) => x.temperature), segments.map(() => 1), 'decoded at the last step of 0, 0.2, ... 1.0');
  } finally {
    await random.close();
  }
});

test('srt and vtt of real output pass the validators and carry the same cues', { timeout: 300_000 }, async () => {
  const wav = longClip(35).wav;
  const srt = await (await transcribe(server, { file: wavBlob(wav), response_format: 'srt', language: 'en' }, server.auth)).text();
  const vtt = await (await transcribe(server, { file: wavBlob(wav), response_format: 'vtt', language: 'en' }, server.auth)).text();
  assert.ok(srt.endsWith('\n\n') && vtt.endsWith('\n\n'), 'both end with a blank line');
  const cues = parseSync(srt).map((n) => n.data as { start: number; end: number; text: string });
  assert.ok(cues.length >= 2);
  for (const c of cues) assert.ok(c.end > c.start && c.text.length > 0, JSON.stringify(c));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { WebVTTParser } = require('webvtt-parser');
  const parsed = new WebVTTParser().parse(vtt, 'metadata');
  assert.deepEqual(parsed.errors, []);
  assert.deepEqual(parsed.cues.map((c: { startTime: number; endTime: number; text: string }) => [Math.round(c.startTime * 1000), Math.round(c.endTime * 1000), c.text]),
    cues.map((c) => [c.start, c.end, c.text]));
});

test('GET /v1/models/{id}: the model object for every listed id (the SDK retrieves it), 404 with the envelope otherwise', async () => {
  const client = new OpenAI({ apiKey: server.apiKey, baseURL: `${server.url}/v1`, maxRetries: 0 });
  const listed = (await client.models.list()).data;
  assert.ok(listed.length > 0);
  for (const m of listed) assert.deepEqual(await client.models.retrieve(m.id), m);
  const res = await fetch(`${server.url}/v1/models/whisper-1`, { headers: server.auth });
  assert.equal(res.status, 404);
  assert.deepEqual((await res.json()).error, {
    message: 'The model "whisper-1" does not exist on this server; GET /v1/models lists the ones that do.',
    type: 'invalid_request_error', param: 'model', code: 'model_not_found',
  });
  assert.equal((await fetch(`${server.url}/v1/models/${listed[0].id}`)).status, 401, 'behind the API key like the list');
});
