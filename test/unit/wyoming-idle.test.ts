// A Wyoming connection's idle close (src/wyoming/connection.ts) over a real
// loopback socket with a short idle time: pings and describes are answered
// but do not keep a connection open (a client pinging could otherwise hold
// one of the 16 for ever); events toward an utterance do.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { WyomingConnection } from '../../src/wyoming/connection';
import { encodeEvent, EventReader, type WyomingEvent } from '../../src/wyoming/protocol';
import { createLogger } from '../../src/log';
import type { Backends } from '../../src/stt/backends';

const IDLE_MS = 300;
const stt = { route: async () => { throw new Error('no transcription in this test'); } } as unknown as Backends;
const server = net.createServer({ allowHalfOpen: true }, (socket) => {
  new WyomingConnection(socket, { stt, logger: createLogger('silent'), maxAudioSeconds: 30, idleMs: IDLE_MS, counted: () => undefined });
});
const port = new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
after(() => server.close());

/** Sends `event` every 50 ms until the server closes the connection or `forMs` passes; returns whether it closed, and what it answered. */
async function keepSending(event: () => Buffer, forMs: number): Promise<{ closed: boolean; answers: WyomingEvent[] }> {
  const socket = net.connect({ host: '127.0.0.1', port: await port });
  const reader = new EventReader();
  const answers: WyomingEvent[] = [];
  socket.on('data', (d: Buffer) => answers.push(...reader.push(d)));
  socket.on('error', () => undefined);
  let closed = false;
  socket.on('close', () => (closed = true));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  for (const until = Date.now() + forMs; !closed && Date.now() < until; ) {
    socket.write(event());
    await new Promise((r) => setTimeout(r, 50));
  }
  socket.destroy();
  return { closed, answers };
}

test('a client that only pings is answered, and closed once the idle time passes all the same', async () => {
  const { closed, answers } = await keepSending(() => encodeEvent('ping', { text: 'x' }), 10_000);
  assert.ok(closed, 'closed within 10 s, though it pinged every 50 ms');
  assert.ok(answers.length > 0 && answers.every((a) => a.type === 'pong'), answers.map((a) => a.type).join(', '));
});

test('a client streaming an utterance is not idle', async () => {
  let first = true;
  const format = { rate: 16000, width: 2, channels: 1 };
  // 50 ms of silence every 50 ms, for four times the idle time: an utterance under way.
  const { closed, answers } = await keepSending(() => {
    const out = first ? Buffer.concat([encodeEvent('audio-start', format), encodeEvent('audio-chunk', format, Buffer.alloc(1600))]) : encodeEvent('audio-chunk', format, Buffer.alloc(1600));
    first = false;
    return out;
  }, 4 * IDLE_MS);
  assert.equal(closed, false);
  assert.deepEqual(answers, []);
});
