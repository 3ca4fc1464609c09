// Audio as clients send it: MP3, FLAC, Ogg Opus, Ogg Vorbis and WebM/Opus
// (a Chromium MediaRecorder recording) decoded in-process, sniffed from the
// bytes (every file here is posted as "audio.wav" with type
// audio/wav, as a careless client would); what is not decoded, damaged or
// too long gets a 400 naming it, and the server keeps serving; a cloud
// provider gets the original bytes under a name that says what they are,
// and the duration charged is the one decoded.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startTestServer, transcribe, wavBlob, type TestServer } from '../helpers/server';
import { AUDIO_DIR, encodedAudio, startOpenAiLike, FAKE_OPENAI_KEY, ROOT, type FakeServer } from '../../fixtures';

const JFK_FILE = path.join(AUDIO_DIR, 'jfk.wav');
const JFK = readFileSync(JFK_FILE);
const BROWSER_WEBM = readFileSync(path.join(ROOT, 'fixtures', 'audio', 'chromium-mediarecorder-jfk-4s.webm'));
let server: TestServer;
let openai: FakeServer;
let jfkText: string;

before(async () => {
  openai = await startOpenAiLike(FAKE_OPENAI_KEY);
  server = await startTestServer({ routing: { mode: 'local', localModel: 'whisper-base' }, env: { STT_MAX_AUDIO_SECONDS: '20' } });
  jfkText = (await (await transcribe(server, { file: wavBlob(JFK) }, server.auth)).json()).text;
  const put = await fetch(`${server.url}/admin/providers/oai`, {
    method: 'PUT', headers: { Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ kind: 'openai', baseUrl: openai.url, apiKey: FAKE_OPENAI_KEY, enabled: true, models: [{ id: 'whisper-1' }] }),
  });
  assert.equal(put.status, 201, 'the provider is created');
});
after(async () => {
  await server.close();
  await openai.close();
});

async function routing(body: unknown): Promise<void> {
  const res = await fetch(`${server.url}/admin/routing`, {
    method: 'PUT', headers: { Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  assert.equal(res.status, 200, await res.text());
}

async function expectError(res: Response, code: string, message: RegExp): Promise<void> {
  const body = await res.json();
  assert.equal(res.status, 400, JSON.stringify(body));
  assert.equal(body.error.code, code);
  assert.equal(body.error.param, 'file');
  assert.match(body.error.message, message);
}

test('MP3, FLAC, Ogg Opus, Ogg Vorbis and a browser\'s WebM are transcribed like the WAV; FLAC (lossless) word for word', async () => {
  for (const format of ['mp3', 'flac', 'opus', 'ogg'] as const) {
    const res = await transcribe(server, { file: wavBlob(encodedAudio(JFK_FILE, format)), response_format: 'verbose_json' }, server.auth);
    const body = await res.json();
    assert.equal(res.status, 200, `${format}: ${JSON.stringify(body)}`);
    assert.ok(Math.abs(body.duration - 11) < 0.1, `${format}: duration ${body.duration}`);
    // Charged what was decoded, in whole seconds up (an MP3 encoder's padding can make 11.0 s into 11.05).
    assert.deepEqual(body.usage, { type: 'duration', seconds: Math.ceil(body.duration) }, format);
    if (format === 'flac') assert.equal(body.text, jfkText);
  }
  // Stereo 44.1 kHz MP3, as phones and browsers record.
  const stereo = await transcribe(server, { file: wavBlob(encodedAudio(JFK_FILE, 'mp3', { rate: 44100, channels: 2 })) }, server.auth);
  assert.equal(stereo.status, 200);
  const webm = await transcribe(server, { file: wavBlob(BROWSER_WEBM), response_format: 'verbose_json' }, server.auth);
  const webmBody = await webm.json();
  assert.equal(webm.status, 200, JSON.stringify(webmBody));
  assert.ok(Math.abs(webmBody.duration - 4) < 0.1, `webm: duration ${webmBody.duration}`);
});

test('what is not decoded, damaged or too long gets a 400 naming it, and the server keeps serving', async () => {
  const aacWebm = Buffer.from(BROWSER_WEBM);
  aacWebm.write('A_AAC\0', aacWebm.indexOf('A_OPUS'), 'latin1');
  await expectError(await transcribe(server, { file: wavBlob(aacWebm) }, server.auth), 'unsupported_codec', /webm\/aac/);
  await expectError(await transcribe(server, { file: wavBlob(BROWSER_WEBM.subarray(0, 40)) }, server.auth), 'corrupt_audio', /webm/);
  const m4a = Buffer.concat([Buffer.from([0, 0, 0, 0x20]), Buffer.from('ftypM4A '), Buffer.alloc(64)]);
  await expectError(await transcribe(server, { file: wavBlob(m4a) }, server.auth), 'unsupported_codec', /mp4/);
  await expectError(await transcribe(server, { file: wavBlob(Buffer.concat([Buffer.from('fLaC'), Buffer.alloc(300, 0x5a)])) }, server.auth), 'corrupt_audio', /flac/);
  // 33 s of speech, over this server's 20-s limit: refused from the FLAC header, and the MP3 by stopping at the limit.
  const long = path.join(server.dataDir, 'jfk-x3.wav');
  const { execFileSync } = await import('node:child_process');
  execFileSync('sox', [JFK_FILE, JFK_FILE, JFK_FILE, long]);
  for (const [format, named] of [['flac', /flac/], ['mp3', /mp3/], ['opus', /ogg\/opus/], ['ogg', /ogg\/vorbis/]] as const) {
    await expectError(await transcribe(server, { file: wavBlob(encodedAudio(long, format)) }, server.auth), 'audio_too_long', named);
  }
  const again = await transcribe(server, { file: wavBlob(JFK) }, server.auth);
  assert.equal(again.status, 200);
  assert.equal((await again.json()).text, jfkText);
});

test('Cloud mode: the provider gets the original MP3 bytes as audio.mp3, and the duration charged is the decoded one', async () => {
  await routing({ mode: 'cloud', cloud: { providerId: 'oai', model: 'whisper-1' } });
  try {
    const mp3 = encodedAudio(JFK_FILE, 'mp3');
    const before = openai.requests.length;
    const res = await transcribe(server, { file: wavBlob(mp3), model: 'oai/whisper-1' }, server.auth);
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    const sent = openai.requests[before];
    assert.equal(sent.fileBytes, mp3.length, 'the upload itself, not a re-encoding');
    assert.equal(sent.fileName, 'audio.mp3', 'named by what the bytes are, not by the client ("audio.wav")');
    assert.ok(sent.fileHead === 'ID3\x04' || sent.fileHead.startsWith('\xff'), `starts like an MP3: ${JSON.stringify(sent.fileHead)}`);
    // Ogg Opus and a browser's WebM, which OpenAI reads too: the bytes as they came, named audio.ogg and audio.webm.
    for (const [file, name, head] of [[encodedAudio(JFK_FILE, 'opus'), 'audio.ogg', 'OggS'], [BROWSER_WEBM, 'audio.webm', '\x1aE\xdf\xa3']] as const) {
      const forwarded = await transcribe(server, { file: wavBlob(file), model: 'oai/whisper-1' }, server.auth);
      assert.equal(forwarded.status, 200, await forwarded.text());
      const got = openai.requests[openai.requests.length - 1];
      assert.deepEqual([got.fileName, got.fileBytes, got.fileHead], [name, file.length, head]);
    }
    // A codec no decoder here reads is refused before the provider sees anything.
    const aacWebm = Buffer.from(BROWSER_WEBM);
    aacWebm.write('A_AAC\0', aacWebm.indexOf('A_OPUS'), 'latin1');
    await expectError(await transcribe(server, { file: wavBlob(aacWebm), model: 'oai/whisper-1' }, server.auth), 'unsupported_codec', /webm\/aac/);
    assert.equal(openai.requests.length, before + 3);
  } finally {
    await routing({ mode: 'local', localModel: 'whisper-base', cloud: null });
  }
});

test('Cloud mode: a WAV goes to the provider as measured, its fmt and the one data chunk charged, never a second data chunk behind it', async () => {
  await routing({ mode: 'cloud', cloud: { providerId: 'oai', model: 'whisper-1' } });
  try {
    // 1 s of jfk's samples in the data chunk the decoder reads, 10 s more in a second one (ffmpeg reads on), and a LIST chunk.
    const wav = readFileSync(JFK_FILE);
    const dataAt = wav.indexOf('data') + 8;
    const samples = wav.subarray(dataAt, dataAt + 32000 * 11);
    const chunk = (id: string, body: Buffer) => Buffer.concat([Buffer.from(id, 'latin1'), Buffer.from(new Uint32Array([body.length]).buffer), body]);
    const fmt = wav.subarray(wav.indexOf('fmt ') + 8, wav.indexOf('fmt ') + 8 + wav.readUInt32LE(wav.indexOf('fmt ') + 4));
    const body = Buffer.concat([Buffer.from('WAVE'), chunk('fmt ', fmt), chunk('data', samples.subarray(0, 32000)), chunk('data', samples.subarray(32000)), chunk('LIST', Buffer.from('INFOjunk'))]);
    const crafted = Buffer.concat([Buffer.from('RIFF'), Buffer.from(new Uint32Array([body.length]).buffer), body]);
    const created = await fetch(`${server.url}/admin/api-keys`, {
      method: 'POST', headers: { Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'two-chunks' }),
    });
    const key = await created.json();
    const res = await transcribe(server, { file: wavBlob(crafted), model: 'oai/whisper-1' }, { Authorization: `Bearer ${key.key}` });
    assert.equal(res.status, 200, await res.text());
    const sent = openai.requests[openai.requests.length - 1];
    assert.equal(sent.fileName, 'audio.wav');
    assert.equal(sent.fileBytes, 12 + 8 + fmt.length + 8 + 32000, 'RIFF, fmt and one second of samples: nothing behind the measured chunk');
    const keys = await (await fetch(`${server.url}/admin/api-keys`, { headers: { Authorization: `Bearer ${server.adminKey}` } })).json();
    assert.equal(keys.data.find((k: { id: string }) => k.id === key.id).usage.audioSeconds, 1, 'charged the second that was sent');
  } finally {
    await routing({ mode: 'local', localModel: 'whisper-base', cloud: null });
  }
});

test('the audio budget is charged the decoded duration of an MP3 (no header to read it from), and an exhausted key is refused before decoding', async () => {
  const created = await fetch(`${server.url}/admin/api-keys`, {
    method: 'POST', headers: { Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'budget-15s', audioSecondsPerDay: 15 }),
  });
  assert.equal(created.status, 201);
  const auth = { Authorization: `Bearer ${(await created.json()).key}` };
  const mp3 = wavBlob(encodedAudio(JFK_FILE, 'mp3'));
  const first = await transcribe(server, { file: mp3 }, auth);
  assert.equal(first.status, 200, await first.text());
  const second = await transcribe(server, { file: mp3 }, auth);
  const body = await second.json();
  assert.equal(second.status, 429, JSON.stringify(body));
  assert.equal(body.error.code, 'audio_budget_exceeded');
  assert.match(body.error.message, /3 s are left and this clip is 12 s/);
  // A key with nothing left is refused before its upload is decoded (no header says how long an MP3 is).
  const exhausted = await fetch(`${server.url}/admin/api-keys`, {
    method: 'POST', headers: { Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'budget-5s', audioSecondsPerDay: 5 }),
  });
  const auth5 = { Authorization: `Bearer ${(await exhausted.json()).key}` };
  const five = path.join(server.dataDir, 'jfk-5s.wav');
  const { execFileSync } = await import('node:child_process');
  execFileSync('sox', [JFK_FILE, five, 'trim', '0', '5']);
  assert.equal((await transcribe(server, { file: wavBlob(readFileSync(five)) }, auth5)).status, 200);
  const refused = await transcribe(server, { file: mp3 }, auth5);
  const refusal = await refused.json();
  assert.equal(refused.status, 429, JSON.stringify(refusal));
  assert.match(refusal.error.message, /none is left/);
});
