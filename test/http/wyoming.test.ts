// The Wyoming server (src/wyoming/) on the synthetic stand-in model: the
// wyoming package from PyPI, as Home Assistant uses it, describes the server
// and transcribes a WAV (16-kHz mono, and 48-kHz stereo) to the text an
// upload of the same file gets; raw-socket clients that break the framing or
// the audio rules get an `error` event naming the problem, and the server
// goes on serving.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startTestServer, transcribe, wavBlob, type TestServer } from '../helpers/server';
import { AUDIO_DIR, readPcm16Mono, writeWav } from '../../fixtures';
import { pythonVenv } from '../../fixtures/python-venv';
import { encodeEvent, EventReader, LIMITS, type WyomingEvent } from '../../src/wyoming/protocol';
import { loadConfig } from '../../src/config';
import { WHISPER_LANGUAGES } from '../../src/stt/languages';

const run = promisify(execFile);
const LOCAL = { mode: 'local' as const, localModel: 'whisper-base' };
let server: TestServer;
let dir: string;
const JFK = readPcm16Mono(readFileSync(path.join(AUDIO_DIR, 'jfk.wav'))).samples;

before(async () => {
  // Utterances of at most 4 s here, so the limit is quick to reach.
  server = await startTestServer({ routing: LOCAL, env: { STT_WYOMING_PORT: '0', STT_MAX_AUDIO_SECONDS: '4' } });
  dir = mkdtempSync(path.join(os.tmpdir(), 'stt-wyoming-'));
});
after(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A new connection's `describe` is answered: the server goes on serving. */
async function stillAnswers(): Promise<void> {
  const c = await connect();
  c.send('describe');
  assert.equal((await c.next()).type, 'info');
  c.socket.end();
  await c.closed;
}

/** A raw Wyoming connection (to this file's server unless `port` says otherwise): send events, read the server's. */
async function connect(port = server.wyomingPort!) {
  const socket = net.connect({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => { socket.once('connect', () => resolve()); socket.once('error', reject); });
  const reader = new EventReader();
  const events: WyomingEvent[] = [];
  let waiting: (() => void) | null = null;
  socket.on('data', (d: Buffer) => {
    events.push(...reader.push(d));
    waiting?.();
  });
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('error', () => undefined);
  let seen = 0;
  return {
    socket,
    closed,
    /** Every event the server sent so far. */
    events,
    send: (type: string, data?: Record<string, unknown>, payload?: Buffer) => socket.write(encodeEvent(type, data, payload)),
    /** The next event from the server (waits up to 30 s). */
    async next(): Promise<WyomingEvent> {
      for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
        if (events.length > seen) return events[seen++];
        await new Promise<void>((resolve) => { waiting = resolve; setTimeout(resolve, 100); });
      }
      throw new Error(`no event; got ${events.map((e) => e.type).join(', ')}`);
    },
  };
}

const pcmBytes = (samples: Float32Array) => {
  const out = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) out.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(samples[i] * 32767))), 2 * i);
  return out;
};
const FORMAT = { rate: 16000, width: 2, channels: 1 };
/** A 16-kHz mono WAV holding exactly these 16-bit samples. */
function wavOf(pcm: Buffer): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(16000, 24);
  header.writeUInt32LE(32000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}

/** The text an upload of `wav` with language=en gets. */
async function uploadText(wav: Buffer): Promise<string> {
  const res = await transcribe(server, { file: wavBlob(wav), language: 'en' }, server.auth);
  assert.equal(res.status, 200);
  return ((await res.json()) as { text: string }).text.trim();
}

test('the wyoming package describes the server and transcribes a WAV to the text an upload of it gets (16-kHz mono, 48-kHz stereo)', { timeout: 300_000 }, async () => {
  const bin = pythonVenv('wyoming', ['wyoming==1.10.2']);
  const script = path.join(__dirname, '..', 'python', 'wyoming_transcribe.py');
  const clip = JFK.subarray(0, 3.5 * 16000);
  const mono = writeWav({ rate: 16000, encoding: 'pcm_s16', channels: [clip] });
  // 48 kHz stereo: each 16-kHz sample three times, the right channel at half the left.
  const left = Float32Array.from({ length: clip.length * 3 }, (_, i) => clip[Math.floor(i / 3)]);
  const stereo = writeWav({ rate: 48000, encoding: 'pcm_s16', channels: [left, left.map((v) => v / 2)] });
  for (const [name, wav] of [['mono-16k', mono], ['stereo-48k', stereo]] as const) {
    const file = path.join(dir, `${name}.wav`);
    writeFileSync(file, wav);
    const { stdout } = await run(path.join(bin, 'python'), [script, '127.0.0.1', String(server.wyomingPort), file, 'en'], { timeout: 120_000 });
    const out = JSON.parse(stdout);
    assert.equal(out.error, undefined, name);
    assert.equal(out.program, 'stt-gateway');
    assert.deepEqual(out.models, ['whisper-base']);
    assert.equal(out.languages, Object.keys(WHISPER_LANGUAGES).length, 'Whisper\'s languages');
    assert.equal(out.streaming, false);
    assert.equal(out.text, await uploadText(wav), name);
    assert.equal(out.language, 'en');
  }
  const metrics = await (await fetch(`${server.url}/metrics`, { headers: { Authorization: `Bearer ${server.adminKey}` } })).text();
  assert.match(metrics, /^stt_wyoming_transcripts_total\{outcome="transcribed"\} 2$/m);
});

test('audio that breaks the rules gets an error event naming the problem, and the connection ends (Home Assistant waits for a transcript or the end); the server goes on', async () => {
  const refusedWith = async (code: string, what: RegExp | null, events: [string, Record<string, unknown>?, Buffer?][]) => {
    const c = await connect();
    for (const [type, data, payload] of events) c.send(type, data, payload);
    const e = await c.next();
    assert.deepEqual([e.type, e.data.code], ['error', code], JSON.stringify(e.data));
    if (what) assert.match(String(e.data.text), what);
    await c.closed;
  };
  await refusedWith('audio_not_started', null, [['audio-chunk', FORMAT, Buffer.alloc(640)]]);
  await refusedWith('audio_not_started', null, [['audio-stop']]);
  await refusedWith('unsupported_audio_format', /width/, [['audio-start', { ...FORMAT, width: 4 }]]);
  await refusedWith('unsupported_audio_format', /rate/, [['audio-start', { ...FORMAT, rate: 7000 }]]);
  await refusedWith('unsupported_audio_format', /channels/, [['audio-start', { ...FORMAT, channels: 3 }]]);
  await refusedWith('audio_format_changed', null, [['audio-start', FORMAT], ['audio-chunk', { ...FORMAT, rate: 8000 }, Buffer.alloc(640)]]);
  await refusedWith('invalid_audio', null, [['audio-start', FORMAT], ['audio-chunk', FORMAT, Buffer.alloc(641)]]);
  // Past STT_MAX_AUDIO_SECONDS (4 s here): refused as it arrives, not held.
  await refusedWith('audio_too_long', /4 s/, [['audio-start', FORMAT], ...[0, 1, 2, 3, 4].map((s): [string, Record<string, unknown>, Buffer] => ['audio-chunk', FORMAT, pcmBytes(JFK.subarray(s * 16000, (s + 1) * 16000))])]);
  await refusedWith('unsupported_language', null, [['transcribe', { language: 'xx' }], ['audio-start', FORMAT], ['audio-chunk', FORMAT, pcmBytes(JFK.subarray(0, 16000))], ['audio-stop']]);

  // A connection that keeps to the rules: ping, an event it passes over, a language as Home Assistant writes it, a transcript.
  const c = await connect();
  c.send('ping', { text: 'hi' });
  assert.deepEqual(await c.next(), { type: 'pong', data: { text: 'hi' }, payload: null });
  c.send('transcribe', { language: 'en-US' });
  c.send('some-other-event', { anything: 1 });
  c.send('audio-start', FORMAT);
  const clip = JFK.subarray(0, 2 * 16000);
  c.send('audio-chunk', FORMAT, pcmBytes(clip));
  // The client ends its side after audio-stop (half-close, as `nc -N` does): its transcript still comes.
  c.socket.end(encodeEvent('audio-stop'));
  const transcript = await c.next();
  assert.equal(transcript.type, 'transcript', JSON.stringify(transcript.data));
  assert.deepEqual(transcript.data, { text: await uploadText(wavOf(pcmBytes(clip))), language: 'en' });
  await c.closed;
  const metrics = await (await fetch(`${server.url}/metrics`, { headers: { Authorization: `Bearer ${server.adminKey}` } })).text();
  assert.match(metrics, /^stt_wyoming_transcripts_total\{outcome="refused"\} 9$/m);
});

test('an utterance with no audio (audio-start, then audio-stop; or only empty chunks) gets an empty transcript, never the text of the audio heard before it, and the connection goes on', async () => {
  const transcribed = async () => {
    const metrics = await (await fetch(`${server.url}/metrics`, { headers: { Authorization: `Bearer ${server.adminKey}` } })).text();
    return Number(/^stt_wyoming_transcripts_total\{outcome="transcribed"\} (\d+)$/m.exec(metrics)?.[1] ?? 0);
  };
  const before = await transcribed();
  const c = await connect();
  c.send('transcribe', { language: 'en' });
  const speech = async () => {
    c.send('audio-start', FORMAT);
    c.send('audio-chunk', FORMAT, pcmBytes(JFK.subarray(0, 2 * 16000)));
    c.send('audio-stop');
    const transcript = await c.next();
    assert.equal(transcript.type, 'transcript');
    assert.notEqual(transcript.data.text, '');
  };
  // Speech first, so the engine's state last heard it: whisper.cpp given no samples decodes the state's last
  // spectrogram, and the empty utterance would be answered with this one's text.
  await speech();
  c.send('audio-start', FORMAT);
  c.send('audio-stop');
  assert.deepEqual(await c.next(), { type: 'transcript', data: { text: '', language: 'en' }, payload: null });
  await speech();
  c.send('audio-start', FORMAT);
  c.send('audio-chunk', FORMAT);
  c.send('audio-chunk', FORMAT, Buffer.alloc(0));
  c.send('audio-stop');
  assert.deepEqual(await c.next(), { type: 'transcript', data: { text: '', language: 'en' }, payload: null });
  c.socket.end();
  await c.closed;
  assert.equal(await transcribed(), before + 4);
});

test('bounds on connections: at most 16 at once, and a client that stops reading what it asked for is cut', async () => {
  const connections = async () => Number(/^stt_wyoming_connections (\d+)$/m.exec(await (await fetch(`${server.url}/metrics`, { headers: { Authorization: `Bearer ${server.adminKey}` } })).text())?.[1]);
  const open = await Promise.all(Array.from({ length: 16 }, () => connect()));
  const extra = net.connect({ host: '127.0.0.1', port: server.wyomingPort! });
  extra.on('error', () => undefined);
  // Refused at once: well inside the 30-s idle close, which would also end it.
  const closedSoon = await Promise.race([
    new Promise<boolean>((resolve) => extra.on('close', () => resolve(true))),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 10_000).unref()),
  ]);
  assert.ok(closedSoon, 'the 17th connection was closed by the cap, not left open');
  assert.equal(await connections(), 16, 'the 16 are still held');
  for (const c of open) c.socket.destroy();
  await Promise.all(open.map((c) => c.closed));

  // Thousands of describes, none of the answers read: the server's unsent output is capped, the connection cut.
  const greedy = net.connect({ host: '127.0.0.1', port: server.wyomingPort! });
  greedy.on('error', () => undefined);
  await new Promise<void>((resolve) => greedy.once('connect', () => resolve()));
  greedy.pause();
  greedy.write(Buffer.concat(Array.from({ length: 20_000 }, () => encodeEvent('describe'))));
  // Well inside the 30-s idle close, so it is the cap that cut it.
  let left = await connections();
  for (const deadline = Date.now() + 10_000; left > 0 && Date.now() < deadline; left = await connections()) await new Promise((r) => setTimeout(r, 100));
  assert.equal(left, 0, 'the connection that stopped reading was cut');
  greedy.destroy();
  await stillAnswers();
});

test('a framing the server cannot go on from is an error event and a closed connection: an endless header, a header that is not JSON, an announced payload over 1 MiB', async () => {
  const cases: [string, (c: Awaited<ReturnType<typeof connect>>) => void][] = [
    ['event_too_large', (c) => c.socket.write('x'.repeat(LIMITS.headerBytes + 10))],
    ['invalid_json', (c) => c.socket.write('{"type": \n')],
    ['invalid_event', (c) => c.socket.write('[1, 2]\n')],
    ['event_too_large', (c) => c.socket.write(`${JSON.stringify({ type: 'audio-chunk', data: FORMAT, payload_length: LIMITS.payloadBytes + 1 })}\n`)],
    ['invalid_event', (c) => c.socket.write(`${JSON.stringify({ type: 'audio-chunk', data_length: -5 })}\n`)],
  ];
  for (const [code, breakIt] of cases) {
    const c = await connect();
    breakIt(c);
    const e = await c.next();
    assert.deepEqual([e.type, e.data.code], ['error', code]);
    await c.closed;
  }
  await stillAnswers();
});

test('shutdown answers the utterance being transcribed, then closes the connection; an idle connection is closed at once', async () => {
  const own = await startTestServer({ routing: LOCAL, env: { STT_WYOMING_PORT: '0' } });
  try {
    const busy = await connect(own.wyomingPort!);
    const idle = await connect(own.wyomingPort!);
    busy.socket.write(Buffer.concat([
      encodeEvent('transcribe', { language: 'en' }), encodeEvent('audio-start', FORMAT),
      encodeEvent('audio-chunk', FORMAT, pcmBytes(JFK.subarray(0, 3 * 16000))), encodeEvent('audio-stop'),
    ]));
    // Shut down once the utterance is being transcribed.
    for (const deadline = Date.now() + 10_000; own.services.local.scheduler.stats().running === 0 && busy.events.length === 0 && Date.now() < deadline;) {
      await new Promise((r) => setImmediate(r));
    }
    const closing = own.close();
    await Promise.all([busy.closed, idle.closed, closing]);
    assert.deepEqual(busy.events.map((e) => e.type), ['transcript']);
    assert.deepEqual(idle.events, []);
  } finally {
    await own.close();
  }
});

test('Wyoming is off unless STT_WYOMING_PORT is set, and listens on loopback unless STT_WYOMING_HOST says otherwise', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'stt-wyoming-config-'));
  try {
    const base = { STT_DATA_DIR: dataDir };
    assert.equal(loadConfig(base).wyomingPort, null);
    const on = loadConfig({ ...base, STT_WYOMING_PORT: '10300' });
    assert.deepEqual([on.wyomingPort, on.wyomingHost], [10300, '127.0.0.1']);
    assert.equal(loadConfig({ ...base, STT_WYOMING_PORT: '10300', STT_WYOMING_HOST: '0.0.0.0' }).wyomingHost, '0.0.0.0');
    assert.throws(() => loadConfig({ ...base, STT_WYOMING_PORT: '70000' }), /STT_WYOMING_PORT/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
