// Live audio (realtime sessions and Wyoming) runs on the local runtime only:
// with routing switched to a cloud provider (a loopback OpenAI-like server),
// a realtime handshake gets 409 realtime_unavailable, a session opened before
// the switch has its next turn fail with that code and goes on, and a Wyoming
// utterance gets an error event local_runtime_unavailable; switched back,
// both transcribe again. Nothing is sent to the provider.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import WebSocket from 'ws';
import { startTestServer, type TestServer } from '../helpers/server';
import { AUDIO_DIR, FAKE_OPENAI_KEY, pcm16At24k, readPcm16Mono, startOpenAiLike, type FakeServer } from '../../fixtures';
import { encodeEvent, EventReader, type WyomingEvent } from '../../src/wyoming/protocol';

const JFK = readPcm16Mono(readFileSync(path.join(AUDIO_DIR, 'jfk.wav'))).samples;
const TWO_SECONDS_24K = pcm16At24k(JFK.subarray(0, 32000));
let server: TestServer;
let openai: FakeServer;

before(async () => {
  openai = await startOpenAiLike(FAKE_OPENAI_KEY);
  server = await startTestServer({ routing: { mode: 'local', localModel: 'whisper-base' }, env: { STT_WYOMING_PORT: '0' } });
  const put = await fetch(`${server.url}/admin/providers/oai`, {
    method: 'PUT', headers: { Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ kind: 'openai', baseUrl: openai.url, apiKey: FAKE_OPENAI_KEY, enabled: true, models: [{ id: 'whisper-1' }] }),
  });
  assert.equal(put.status, 201);
});
after(async () => {
  await server?.close();
  await openai?.close();
});

async function routing(body: unknown): Promise<void> {
  const res = await fetch(`${server.url}/admin/routing`, {
    method: 'PUT', headers: { Authorization: `Bearer ${server.adminKey}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  assert.equal(res.status, 200, await res.text());
}
const toCloud = () => routing({ mode: 'cloud', cloud: { providerId: 'oai', model: 'whisper-1' } });
const toLocal = () => routing({ mode: 'local', localModel: 'whisper-base', cloud: null });

/** An open realtime session: its events, and the next one of a type (bounded wait). */
async function session() {
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/v1/realtime?intent=transcription`, { headers: server.auth });
  const events: any[] = [];
  ws.on('message', (d) => events.push(JSON.parse(String(d))));
  await new Promise<void>((resolve, reject) => { ws.once('open', () => resolve()); ws.once('error', reject); });
  const turn = async (): Promise<any> => {
    const from = events.length;
    const b64 = Buffer.from(TWO_SECONDS_24K.buffer, TWO_SECONDS_24K.byteOffset, TWO_SECONDS_24K.byteLength).toString('base64');
    ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: b64 }));
    ws.send(JSON.stringify({ type: 'input_audio_buffer.commit' }));
    const ends = ['conversation.item.input_audio_transcription.completed', 'conversation.item.input_audio_transcription.failed'];
    for (const until = Date.now() + 60_000; Date.now() < until; await new Promise((r) => setTimeout(r, 20))) {
      const end = events.slice(from).find((e) => ends.includes(e.type));
      if (end) return end;
    }
    throw new Error(`no end of turn; events: ${events.map((e) => e.type).join(', ')}`);
  };
  return { ws, turn };
}

/** One Wyoming utterance of 2 s on a new connection: the event the server answers with. */
async function wyomingUtterance(): Promise<WyomingEvent> {
  const socket = net.connect({ host: '127.0.0.1', port: server.wyomingPort! });
  await new Promise<void>((resolve, reject) => { socket.once('connect', () => resolve()); socket.once('error', reject); });
  const reader = new EventReader();
  const answered = new Promise<WyomingEvent>((resolve) => socket.on('data', (d: Buffer) => {
    const [first] = reader.push(d);
    if (first) resolve(first);
  }));
  const format = { rate: 16000, width: 2, channels: 1 };
  const pcm = Buffer.alloc(32000 * 2);
  for (let i = 0; i < 32000; i++) pcm.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(JFK[i] * 32767))), 2 * i);
  socket.write(Buffer.concat([encodeEvent('transcribe', { language: 'en' }), encodeEvent('audio-start', format), encodeEvent('audio-chunk', format, pcm), encodeEvent('audio-stop')]));
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no Wyoming answer within 60 s')), 60_000).unref());
  try {
    return await Promise.race([answered, timeout]);
  } finally {
    socket.destroy();
  }
}

test('routed to a cloud provider, live audio is refused by name and the provider gets nothing; routed back, it transcribes again', async () => {
  const open = await session();
  assert.equal((await open.turn()).type, 'conversation.item.input_audio_transcription.completed', 'local: a turn transcribes');
  const providerCalls = openai.requests.length;
  await toCloud();
  try {
    const failed = await open.turn();
    assert.deepEqual([failed.type, failed.error.code], ['conversation.item.input_audio_transcription.failed', 'realtime_unavailable']);
    assert.equal(open.ws.readyState, WebSocket.OPEN, 'the session goes on');
    // A new handshake is refused before the upgrade.
    const refused = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      const ws = new WebSocket(`${server.url.replace('http', 'ws')}/v1/realtime?intent=transcription`, { headers: server.auth });
      ws.once('open', () => reject(new Error('the session opened')));
      ws.once('unexpected-response', (_req, res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      });
      ws.once('error', () => undefined);
    });
    assert.deepEqual([refused.status, refused.body.error.code], [409, 'realtime_unavailable']);
    const wyoming = await wyomingUtterance();
    assert.deepEqual([wyoming.type, wyoming.data.code], ['error', 'local_runtime_unavailable'], JSON.stringify(wyoming.data));
    assert.equal(openai.requests.length, providerCalls, 'live audio never went to the provider');
  } finally {
    await toLocal();
  }
  assert.equal((await open.turn()).type, 'conversation.item.input_audio_transcription.completed', 'local again: the same session transcribes');
  assert.equal((await wyomingUtterance()).type, 'transcript');
  open.ws.close();
});
