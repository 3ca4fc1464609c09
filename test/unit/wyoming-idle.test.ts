// A Wyoming connection's idle close (src/wyoming/connection.ts) over a real
// loopback socket with a short idle time: pings, describes and transcribes
// are answered (or taken) but do not keep a connection open (a client
// repeating one could otherwise hold one of the 16 for ever); an
// utterance's audio does.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { WyomingConnection } from '../../src/wyoming/connection';
import { encodeEvent, EventReader, type WyomingEvent } from '../../src/wyoming/protocol';
import { createLogger } from '../../src/log';
import type { Backends } from '../../src/stt/backends';

const IDLE_MS = 1500;
const stt = { route: async () => { throw new Error('no transcription in this test'); } } as unknown as Backends;
// Utterances of at most 1 s plus 3 s of slack: an utterance must end within 4 s of its first audio-start.
const server = net.createServer({ allowHalfOpen: true }, (socket) => {
  new WyomingConnection(socket, { stt, logger: createLogger('silent'), maxAudioSeconds: 1, idleMs: IDLE_MS, utteranceSlackMs: 3000, counted: () => undefined });
});
const port = new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
after(() => server.close());

/** A connected client: its socket, the events the server answered, and whether the server closed it. */
async function client(to: number): Promise<{ socket: net.Socket; answers: WyomingEvent[]; closed: () => boolean }> {
  const socket = net.connect({ host: '127.0.0.1', port: to });
  const reader = new EventReader();
  const answers: WyomingEvent[] = [];
  socket.on('data', (d: Buffer) => answers.push(...reader.push(d)));
  socket.on('error', () => undefined);
  let closed = false;
  socket.on('close', () => (closed = true));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, answers, closed: () => closed };
}

/** Sends `event` every 50 ms until the server closes the connection or `forMs` passes; returns whether it closed, and what it answered. */
async function keepSending(event: () => Buffer, forMs: number): Promise<{ closed: boolean; answers: WyomingEvent[] }> {
  const { socket, answers, closed } = await client(await port);
  for (const until = Date.now() + forMs; !closed() && Date.now() < until; ) {
    socket.write(event());
    await new Promise((r) => setTimeout(r, 50));
  }
  socket.destroy();
  return { closed: closed(), answers };
}

test('a client that only pings is answered, and closed once the idle time passes all the same', async () => {
  const { closed, answers } = await keepSending(() => encodeEvent('ping', { text: 'x' }), 10_000);
  assert.ok(closed, 'closed within 10 s, though it pinged every 50 ms');
  assert.ok(answers.length > 0 && answers.every((a) => a.type === 'pong'), answers.map((a) => a.type).join(', '));
});

test('a client that only repeats transcribe is closed once the idle time passes', async () => {
  const { closed } = await keepSending(() => encodeEvent('transcribe', { language: 'en' }), 10_000);
  assert.ok(closed, 'closed within 10 s, though it sent transcribe every 50 ms');
});

test('a client streaming an utterance is not idle', async () => {
  let first = true;
  const format = { rate: 16000, width: 2, channels: 1 };
  // An empty chunk every 50 ms (no audio, so within the 1-s utterance), for well over the idle time but inside the utterance's 4 s.
  const { closed, answers } = await keepSending(() => {
    const out = first ? Buffer.concat([encodeEvent('audio-start', format), encodeEvent('audio-chunk', format)]) : encodeEvent('audio-chunk', format);
    first = false;
    return out;
  }, 2500);
  assert.equal(closed, false);
  assert.deepEqual(answers, []);
});

test('an audio-start over an open utterance keeps its deadline: restarting it does not hold the connection', async () => {
  const format = { rate: 16000, width: 2, channels: 1 };
  const { closed, answers } = await keepSending(() => Buffer.concat([encodeEvent('audio-start', format), encodeEvent('audio-chunk', format)]), 10_000);
  assert.ok(closed, 'closed within 10 s');
  assert.deepEqual(answers.map((a) => [a.type, a.data.code]), [['error', 'utterance_timeout']]);
});

test('the idle time counts from the transcript, not from the audio-stop: a slow transcription does not close the connection under its client', async () => {
  // Idle 3 s, a transcription of 2.5 s: counted from the audio-stop the connection would close 0.5 s after
  // the transcript; counted from the transcript, a ping 1.5 s after it is still answered.
  const slowStt = {
    route: async () => ({ target: { mode: 'local' } }),
    transcribe: async () => {
      await new Promise((r) => setTimeout(r, 2500));
      return { result: { text: 'hello', language: 'english' } };
    },
  } as unknown as Backends;
  const slow = net.createServer({ allowHalfOpen: true }, (socket) => {
    new WyomingConnection(socket, { stt: slowStt, logger: createLogger('silent'), maxAudioSeconds: 1, idleMs: 3000, utteranceSlackMs: 3000, counted: () => undefined });
  });
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', () => resolve()));
  const { socket, answers, closed } = await client((slow.address() as net.AddressInfo).port);
  try {
    const format = { rate: 16000, width: 2, channels: 1 };
    socket.write(Buffer.concat([encodeEvent('audio-start', format), encodeEvent('audio-chunk', format, Buffer.alloc(16000)), encodeEvent('audio-stop')]));
    for (let i = 0; i < 300 && !answers.some((a) => a.type === 'transcript'); i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(answers.map((a) => a.type), ['transcript']);
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(closed(), false, 'closed 1.5 s after the transcript, under a 3-s idle time');
    socket.write(encodeEvent('ping', { text: 'x' }));
    for (let i = 0; i < 100 && answers.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(answers.map((a) => a.type), ['transcript', 'pong']);
  } finally {
    socket.destroy();
    slow.close();
  }
});
