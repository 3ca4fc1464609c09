// Scheduler order and limits with controllable jobs and a fake clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Scheduler, QueueFullError, AbortedError } from '../../src/stt/local/scheduler';

function harness(opts: { threads: number; slots: number; capacity: number }) {
  let now = 0;
  const s = new Scheduler({ ...opts, now: () => now });
  const started: string[] = [];
  const finishers = new Map<string, () => void>();
  const submit = (name: string, cost: number, signal?: AbortSignal) =>
    s.submit(cost, signal, (threads) => {
      started.push(`${name}:${threads}`);
      return new Promise<string>((resolve) => finishers.set(name, () => resolve(name)));
    });
  const finish = async (name: string) => {
    finishers.get(name)!();
    await new Promise((r) => setImmediate(r));
  };
  return { s, started, submit, finish, tick: (ms: number) => (now += ms) };
}

test('threads per job never exceed the budget', () => {
  assert.equal(new Scheduler({ threads: 2, slots: 2, capacity: 1 }).threadsPerJob, 1);
  assert.equal(new Scheduler({ threads: 8, slots: 3, capacity: 1 }).threadsPerJob, 2);
  assert.equal(new Scheduler({ threads: 1, slots: 1, capacity: 1 }).threadsPerJob, 1);
});

test('shortest estimated work first', async () => {
  const h = harness({ threads: 1, slots: 1, capacity: 10 });
  h.submit('first', 10);
  h.submit('long', 25);
  h.submit('short', 2);
  h.submit('mid', 8);
  await h.finish('first');
  await h.finish('short');
  await h.finish('mid');
  assert.deepEqual(h.started, ['first:1', 'short:1', 'mid:1', 'long:1']);
});

test('ageing lets a long job overtake newer short ones', async () => {
  const h = harness({ threads: 1, slots: 1, capacity: 10 });
  h.submit('running', 5);
  h.submit('long', 20);
  h.tick(60_000); // waited a minute: its key drops by 120 s of audio
  h.submit('short', 1);
  await h.finish('running');
  assert.deepEqual(h.started, ['running:1', 'long:1']);
});

test('long jobs never hold every slot, so a short clip starts at once', async () => {
  const h = harness({ threads: 2, slots: 2, capacity: 10 });
  h.submit('long-1', 120);
  h.submit('long-2', 120);
  assert.deepEqual(h.started, ['long-1:1']);
  h.submit('short', 3);
  assert.deepEqual(h.started, ['long-1:1', 'short:1']);
  await h.finish('short');
  await h.finish('long-1');
  assert.deepEqual(h.started, ['long-1:1', 'short:1', 'long-2:1']);
});

test('a full queue rejects with QueueFullError and a retry estimate', async () => {
  const h = harness({ threads: 1, slots: 1, capacity: 1 });
  h.submit('a', 10);
  h.submit('b', 10);
  await assert.rejects(h.submit('c', 10), (e) => e instanceof QueueFullError && e.retryAfterSeconds > 0);
});

test('aborting a queued job removes it; an aborted signal never queues', async () => {
  const h = harness({ threads: 1, slots: 1, capacity: 5 });
  h.submit('a', 1);
  const c = new AbortController();
  const b = h.submit('b', 1, c.signal);
  assert.equal(h.s.stats().waiting, 1);
  c.abort();
  await assert.rejects(b, AbortedError);
  assert.equal(h.s.stats().waiting, 0);
  await assert.rejects(h.submit('x', 1, AbortSignal.abort()), AbortedError);
  await h.finish('a');
  await h.s.idle();
  assert.deepEqual(h.started, ['a:1']);
});
