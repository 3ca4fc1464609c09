// Scheduler order and limits with controllable jobs and a fake clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Scheduler, QueueFullError, AbortedError } from '../../src/stt/local/scheduler';

function harness(opts: { threads: number; slots: number; capacity: number; maxPaused?: number; order?: 'shortest-first' | 'arrival' }) {
  let now = 0;
  const s = new Scheduler({ ...opts, now: () => now });
  const started: string[] = [];
  /** Pause and resume calls, in order. */
  const events: string[] = [];
  const finishers = new Map<string, (err?: Error) => void>();
  const submit = (name: string, cost: number, signal?: AbortSignal, pausable = true) =>
    s.submit(cost, signal, ({ threads, attach }) => {
      started.push(`${name}:${threads}`);
      if (pausable) attach({ pause: () => events.push(`pause ${name}`), resume: () => events.push(`resume ${name}`) });
      return new Promise<string>((resolve, reject) => finishers.set(name, (err) => (err ? reject(err) : resolve(name))));
    });
  const finish = async (name: string, err?: Error) => {
    finishers.get(name)!(err);
    await new Promise((r) => setImmediate(r));
  };
  return { s, started, events, submit, finish, tick: (ms: number) => (now += ms) };
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

test("order 'arrival' starts jobs in arrival order and never pauses one (the benchmark's control)", async () => {
  const h = harness({ threads: 2, slots: 1, capacity: 10, order: 'arrival' });
  h.submit('long', 120);
  h.submit('long-2', 120);
  h.tick(1);
  h.submit('short', 5);
  h.submit('short-2', 2);
  assert.deepEqual(h.started, ['long:2'], 'a short job does not preempt');
  assert.deepEqual(h.events, []);
  await h.finish('long');
  await h.finish('long-2');
  await h.finish('short');
  await h.finish('short-2');
  assert.deepEqual(h.started, ['long:2', 'long-2:2', 'short:2', 'short-2:2']);
  assert.deepEqual(h.events, []);
  await h.s.idle();
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

test('a short clip pauses a long job at once and the long job resumes after it', async () => {
  const h = harness({ threads: 2, slots: 1, capacity: 10 });
  h.submit('long', 120);
  assert.deepEqual(h.started, ['long:2'], 'a lone job gets every thread');
  h.submit('short', 5);
  assert.deepEqual(h.started, ['long:2', 'short:2']);
  assert.deepEqual(h.events, ['pause long']);
  assert.deepEqual(h.s.stats(), { running: 2, paused: 1, waiting: 0, preemptions: 1, capacity: 10, slots: 1, threadsPerJob: 2 });
  h.submit('short-2', 4);
  assert.deepEqual(h.started, ['long:2', 'short:2'], 'a short job is never paused for another');
  await h.finish('short');
  assert.deepEqual(h.started, ['long:2', 'short:2', 'short-2:2'], 'waiting short jobs still go before the paused long one');
  await h.finish('short-2');
  assert.deepEqual(h.events, ['pause long', 'resume long']);
  await h.finish('long');
  await h.s.idle();
});

test('a long job is never paused for another long one, nor once it has aged past a new short one', async () => {
  const h = harness({ threads: 1, slots: 1, capacity: 10 });
  h.submit('long', 120);
  h.submit('long-2', 60);
  assert.deepEqual(h.events, []);
  h.tick(60_000); // key 120 - 2 * 60 = 0 < 5
  h.submit('short', 5);
  assert.deepEqual(h.events, []);
  assert.deepEqual(h.started, ['long:1']);
});

test('at most maxPaused jobs sit paused; a job that never attached is never paused', async () => {
  const h = harness({ threads: 2, slots: 2, capacity: 10, maxPaused: 1 });
  h.submit('long-a', 100);
  h.submit('long-b', 90, undefined, false);
  h.submit('short', 3);
  assert.deepEqual(h.events, ['pause long-a'], 'the paused one had the worse key and could be paused');
  h.submit('long-c', 80);
  h.submit('short-2', 2);
  assert.deepEqual(h.events, ['pause long-a'], 'long-b never attached and the paused list is full');
  assert.deepEqual(h.started, ['long-a:1', 'long-b:1', 'short:1']);
  await h.finish('short');
  assert.deepEqual(h.started, ['long-a:1', 'long-b:1', 'short:1', 'short-2:1']);
});

test('aborting a paused job frees its place and the queue drains', async () => {
  const h = harness({ threads: 1, slots: 1, capacity: 10 });
  const long = h.submit('long', 120);
  h.submit('short', 5);
  assert.equal(h.s.stats().paused, 1);
  const rejected = assert.rejects(long, AbortedError);
  await h.finish('long', new AbortedError());
  await rejected;
  assert.equal(h.s.stats().paused, 0);
  await h.finish('short');
  await h.s.idle();
  assert.deepEqual(h.events, ['pause long']);
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

test('the job a long one is paused for is the one that starts, not an aged long job waiting', async () => {
  const h = harness({ threads: 1, slots: 1, capacity: 10 });
  h.submit('V', 600);
  h.submit('W', 40); // long: never pauses V by itself
  h.tick(20_000); // W's key has aged to 0, below a new 5-s job's
  h.submit('S', 5);
  assert.deepEqual(h.events, ['pause V']);
  assert.deepEqual(h.started, ['V:1', 'S:1'], 'S runs in the slot V was paused for');
  await h.finish('S');
  assert.deepEqual(h.started, ['V:1', 'S:1', 'W:1'], 'then W, whose aged key beats paused V');
});

test('a long job is not paused before its native work has begun; the short job preempts it once it has', async () => {
  const s = new Scheduler({ threads: 1, slots: 1, capacity: 10 });
  const events: string[] = [];
  let longStarted = false;
  const finishers = new Map<string, () => void>();
  const job = (name: string, started: () => boolean) => s.submit(name === 'long' ? 120 : 5, undefined, ({ attach }) => {
    events.push(`start ${name}`);
    attach({ pause: () => events.push(`pause ${name}`), resume: () => events.push(`resume ${name}`), started });
    return new Promise<void>((resolve) => finishers.set(name, resolve));
  });
  void job('long', () => longStarted);
  void job('short', () => true);
  assert.deepEqual(events, ['start long'], 'not paused while it waits for a pool thread');
  longStarted = true;
  for (let i = 0; i < 200 && !events.includes('start short'); i++) await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(events, ['start long', 'pause long', 'start short']);
  finishers.get('short')!();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(events.at(-1), 'resume long');
  finishers.get('long')!();
  await s.idle();
});
