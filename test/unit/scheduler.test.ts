// Scheduler order and limits with controllable jobs and a fake clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { Scheduler, QueueFullError, OwnerShareFullError, EvictedError, type JobStart } from '../../src/stt/local/scheduler';
import { AbortedError } from '../../src/domain-errors';

function harness(opts: { threads: number; slots: number; capacity: number; ownerCapacity?: number; maxPaused?: number; order?: 'shortest-first' | 'arrival' }) {
  let now = 0;
  const s = new Scheduler({ ...opts, now: () => now });
  const started: string[] = [];
  /** Pause and resume calls, in order. */
  const events: string[] = [];
  const finishers = new Map<string, (err?: Error) => void>();
  const work = (name: string, pausable: boolean, evictable = false) => ({ threads, attach }: JobStart) => {
    started.push(`${name}:${threads}`);
    // Evicted, a job's native call returns aborted, as the engine's does.
    const evict = () => {
      events.push(`evict ${name}`);
      finishers.get(name)!(new AbortedError());
    };
    if (pausable) attach({ pause: () => events.push(`pause ${name}`), resume: () => events.push(`resume ${name}`), ...(evictable && { evict }) });
    return new Promise<string>((resolve, reject) => finishers.set(name, (err) => (err ? reject(err) : resolve(name))));
  };
  const submit = (name: string, cost: number, signal?: AbortSignal, pausable = true, owner?: string) => s.submit(cost, signal, work(name, pausable), { owner });
  /** A job in the background lane (a piece of a batch job). */
  const background = (name: string, cost: number, signal?: AbortSignal) => s.submit(cost, signal, work(name, true, true), { background: true, owner: 'batch' });
  const finish = async (name: string, err?: Error) => {
    finishers.get(name)!(err);
    await new Promise((r) => setImmediate(r));
  };
  return { s, started, events, submit, background, finish, tick: (ms: number) => (now += ms) };
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

const order = (h: { started: string[] }) => h.started.map((s) => s.split(':')[0]);

test('fair between keys: one key\'s burst queues behind itself, not in front of another key\'s jobs', async () => {
  const h = harness({ threads: 1, slots: 1, capacity: 10 });
  for (const n of ['a1', 'a2', 'a3', 'a4']) h.submit(n, 20, undefined, true, 'key-a');
  h.tick(1);
  h.submit('b1', 20, undefined, true, 'key-b');
  h.submit('b2', 20, undefined, true, 'key-b');
  for (let i = 0; i < 5; i++) await h.finish(order(h)[i]);
  // Without fairness: a1 a2 a3 a4 b1 b2. With it the keys take turns (ties go to the older job).
  assert.deepEqual(order(h), ['a1', 'b1', 'a2', 'b2', 'a3', 'a4']);
});

test('fairness: another key\'s short clip goes before a burst of short clips, which keep shortest-first among themselves', async () => {
  const h = harness({ threads: 1, slots: 1, capacity: 10 });
  h.submit('a-long', 25, undefined, true, 'key-a');
  h.submit('a-7', 7, undefined, true, 'key-a');
  h.submit('a-5', 5, undefined, true, 'key-a');
  h.submit('a-6', 6, undefined, true, 'key-a');
  h.submit('b-5', 5, undefined, true, 'key-b');
  for (let i = 0; i < 4; i++) await h.finish(order(h)[i]);
  assert.deepEqual(order(h), ['a-long', 'b-5', 'a-5', 'a-6', 'a-7']);
});

test('fairness holds through preemption: another key\'s stream of short clips does not keep a long job paused to the end', async () => {
  const h = harness({ threads: 1, slots: 1, capacity: 100, maxPaused: 1 });
  const done: string[] = [];
  void h.submit('long', 120, undefined, true, 'key-a').then((n) => done.push(n));
  for (let i = 0; i < 60; i++) void h.submit(`short-${i}`, 5, undefined, true, 'key-b').then((n) => done.push(n));
  await new Promise((r) => setImmediate(r));
  const paused = () => h.events.filter((e) => e.endsWith(' long')).at(-1) === 'pause long';
  while (done.length < 61) {
    // The job computing now: the long one unless paused, else the latest short one started and not done.
    const running = h.started.map((s) => s.split(':')[0]).filter((n) => !done.includes(n) && (n !== 'long' || !paused())).at(-1)!;
    await h.finish(running);
  }
  const before = done.indexOf('long');
  // Key B gets about as much audio as key A's 120 s before A goes on (fair shares), not all 60 clips.
  assert.ok(before > 0 && before < 40, `the long job finished after ${before} short clips`);
  assert.ok(h.events.filter((e) => e === 'pause long').length <= 2, h.events.join(', '));
});

test('one key alone is served exactly as without fairness', async () => {
  const orders: string[][] = [];
  for (const owner of [undefined, 'key-a']) {
    const h = harness({ threads: 1, slots: 1, capacity: 10 });
    h.submit('first', 10, undefined, true, owner);
    h.submit('long', 25, undefined, true, owner);
    h.tick(3000);
    h.submit('short', 2, undefined, true, owner);
    h.submit('mid', 8, undefined, true, owner);
    for (const n of ['first', 'short', 'mid', 'long']) if (h.started.some((s) => s.startsWith(`${n}:`))) await h.finish(n);
    while (h.started.length < 4) await h.finish(h.started[h.started.length - 1].split(':')[0]);
    orders.push(h.started);
  }
  assert.deepEqual(orders[1], orders[0]);
});

test('one key alone is paused and resumed exactly as without fairness', async () => {
  const runs: string[][] = [];
  for (const owner of [undefined, 'key-a']) {
    const h = harness({ threads: 1, slots: 1, capacity: 10, maxPaused: 1 });
    const done: string[] = [];
    for (const [name, cost] of [['long', 120], ['long-2', 90]] as const) void h.submit(name, cost, undefined, true, owner).then((n) => done.push(n));
    h.tick(500);
    for (const [name, cost] of [['s1', 5], ['s2', 3], ['s3', 8]] as const) void h.submit(name, cost, undefined, true, owner).then((n) => done.push(n));
    await new Promise((r) => setImmediate(r));
    while (done.length < 5) {
      const pausedNow = new Set(h.events.filter((e, i, all) => e.startsWith('pause ') && !all.slice(i + 1).includes(`resume ${e.slice(6)}`)).map((e) => e.slice(6)));
      const running = h.started.map((x) => x.split(':')[0]).filter((n) => !done.includes(n) && !pausedNow.has(n)).at(-1)!;
      h.tick(1000);
      await h.finish(running);
    }
    runs.push([...h.started, '|', ...h.events, '|', ...done]);
  }
  assert.deepEqual(runs[1], runs[0]);
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
  assert.deepEqual(h.s.stats(), { running: 2, paused: 1, waiting: 0, preemptions: 1, background: 0, capacity: 10, ownerCapacity: 10, slots: 1, threadsPerJob: 2 });
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

test('the error classes: AbortedError is named AbortError, as DOM and Node name an abort', () => {
  assert.equal(new AbortedError().name, 'AbortError');
  assert.equal(new QueueFullError(3).name, 'QueueFullError');
  assert.equal(new QueueFullError(3).retryAfterSeconds, 3);
});

test('capacity 0: a job starts only into a free slot, none waits', async () => {
  const h = harness({ threads: 1, slots: 1, capacity: 0 });
  assert.equal(h.s.isFull(), false, 'an idle scheduler takes a job');
  h.submit('a', 10);
  assert.deepEqual(h.started, ['a:1']);
  assert.equal(h.s.isFull(), true, 'the slot is taken and nothing may wait');
  await assert.rejects(h.submit('b', 4), QueueFullError);
  await h.finish('a');
  assert.equal(h.s.isFull(), false);
  h.submit('c', 1);
  assert.deepEqual(h.started, ['a:1', 'c:1']);
});

test('the retry estimate: queued and paused audio at the smoothed speed, shared by the slots, plus the job refused', async () => {
  const h = harness({ threads: 2, slots: 2, capacity: 1 });
  assert.equal(h.s.estimatedWaitSeconds(), 0);
  h.submit('a', 10);
  h.submit('b', 20);
  h.submit('c', 30); // waits: 30 s of audio at the initial 0.5 s per audio second, over 2 slots
  assert.equal(h.s.estimatedWaitSeconds(), 7.5);
  await assert.rejects(h.submit('d', 4), (e) => e instanceof QueueFullError && e.retryAfterSeconds === 7.5 + 4 * 0.5);
  const p = harness({ threads: 1, slots: 1, capacity: 10 });
  p.submit('long', 100);
  p.submit('short', 6); // pauses long: its 100 s count as queued
  assert.equal(p.s.stats().paused, 1);
  assert.equal(p.s.estimatedWaitSeconds(), 50);
});

/** The smoothed speed (wall seconds per audio second), read through the estimate for a probe job that waits. */
async function speedOf(h: ReturnType<typeof harness>): Promise<number> {
  h.submit('probe-run', 1);
  h.submit('probe-wait', 10);
  const speed = h.s.estimatedWaitSeconds() / 10;
  await h.finish('probe-run');
  await h.finish('probe-wait');
  return Math.round(speed * 1e6) / 1e6;
}

test('the speed estimate learns from computing time, without the time a job sat paused', async () => {
  const h = harness({ threads: 1, slots: 1, capacity: 10 });
  h.tick(1_000);
  h.submit('long', 100); // starts at 1 s
  h.tick(9_000);
  h.submit('short', 5); // pauses long at 10 s
  h.tick(2_000);
  await h.finish('short'); // 2 s for 5 s of audio: 0.8 * 0.5 + 0.2 * 0.4 = 0.48; long resumes at 12 s
  assert.deepEqual(h.events, ['pause long', 'resume long']);
  h.tick(49_000);
  await h.finish('long'); // 61 - 1 - 2 (paused) = 58 s for 100 s: 0.8 * 0.48 + 0.2 * 0.58 = 0.5
  assert.equal(await speedOf(h), 0.5);
});

test('the speed estimate ignores a job aborted while paused and a job of no audio', async () => {
  const h = harness({ threads: 1, slots: 1, capacity: 10 });
  h.tick(1_000);
  const long = h.submit('long', 100);
  h.tick(9_000);
  h.submit('short', 5);
  h.tick(1_000);
  const rejected = assert.rejects(long, AbortedError);
  await h.finish('long', new AbortedError()); // finishes while paused: 10 s that say nothing of its speed
  await rejected;
  h.tick(1_000);
  await h.finish('short'); // 2 s for 5 s: 0.48
  h.submit('empty', 0);
  h.tick(1_000);
  await h.finish('empty'); // 1 s for no audio: no division by zero
  assert.equal(await speedOf(h), 0.48);
});

test('a job of exactly longJobSeconds (30 s) is not long: never paused', async () => {
  const h = harness({ threads: 1, slots: 1, capacity: 10 });
  h.submit('thirty', 30);
  h.submit('short', 1);
  assert.deepEqual(h.events, []);
  assert.deepEqual(h.started, ['thirty:1']);
});

test('a short job whose key only ties the long job\'s does not pause it', async () => {
  const h = harness({ threads: 1, slots: 1, capacity: 10 });
  h.submit('long', 120);
  h.tick(57_500); // 120 - 2 * 57.5 = 5: the same key as a new 5-s job
  h.submit('short', 5);
  assert.deepEqual(h.events, []);
  h.tick(1); // now the long job's key is the worse
  h.submit('short-2', 5 - 0.01);
  assert.deepEqual(h.events, ['pause long']);
});

test('the long job paused is the one with the worst key, the first started on a tie', async () => {
  for (const [costA, costB, paused] of [[200, 100, 'a'], [100, 200, 'b'], [150, 150, 'a']] as const) {
    const h = harness({ threads: 2, slots: 2, capacity: 10 });
    h.submit('a', costA);
    h.submit('b', costB);
    h.submit('short', 5);
    assert.deepEqual(h.events, [`pause ${paused}`], `${costA} and ${costB}`);
  }
});

test('maxPaused defaults to slots: with one slot, a second long job is not paused while one sits paused', async () => {
  const h = harness({ threads: 1, slots: 1, capacity: 10 });
  h.submit('long-a', 120);
  h.submit('long-b', 60);
  h.submit('short', 5);
  assert.deepEqual(h.events, ['pause long-a']);
  await h.finish('short');
  assert.deepEqual(h.started, ['long-a:1', 'short:1', 'long-b:1'], 'long-b has the better key');
  h.submit('short-2', 5);
  assert.deepEqual(h.events, ['pause long-a'], 'the paused list is full');
  const two = harness({ threads: 1, slots: 1, capacity: 10, maxPaused: 2 });
  two.submit('long-a', 120);
  two.submit('long-b', 60);
  two.submit('short', 5);
  await two.finish('short');
  two.submit('short-2', 5);
  assert.deepEqual(two.events, ['pause long-a', 'pause long-b'], 'maxPaused 2 lets a second one pause');
});

test("order 'arrival' never pauses, even when the clock steps back", () => {
  const h = harness({ threads: 1, slots: 1, capacity: 10, order: 'arrival' });
  h.submit('long', 120);
  h.tick(-60_000); // Date.now is wall time: a later job may carry an earlier time
  h.submit('short', 5);
  assert.deepEqual(h.events, []);
  assert.deepEqual(h.started, ['long:1']);
});

test('abortWaiting rejects every waiting job, leaves running and paused ones to finish, then idle resolves', async () => {
  const h = harness({ threads: 1, slots: 1, capacity: 10 });
  h.submit('long', 120);
  h.submit('short', 5); // pauses long
  const w1 = h.submit('w1', 3);
  const w2 = h.submit('w2', 200);
  h.s.abortWaiting();
  await assert.rejects(w1, AbortedError);
  await assert.rejects(w2, AbortedError);
  assert.deepEqual(h.s.stats(), { running: 2, paused: 1, waiting: 0, preemptions: 1, background: 0, capacity: 10, ownerCapacity: 10, slots: 1, threadsPerJob: 1 });
  await h.finish('short');
  await h.finish('long');
  assert.deepEqual(h.started, ['long:1', 'short:1']);
  await h.s.idle();
});

test('idle() waits for every running, paused and waiting job', async () => {
  const h = harness({ threads: 1, slots: 1, capacity: 10 });
  let idle = false;
  void h.s.idle().then(() => (idle = true));
  await new Promise((r) => setImmediate(r));
  assert.equal(idle, true, 'resolves at once when nothing runs');
  idle = false;
  h.submit('a', 10);
  void h.s.idle().then(() => (idle = true));
  const c = new AbortController();
  const queued = h.submit('q', 10, c.signal);
  c.abort();
  await assert.rejects(queued, AbortedError);
  assert.equal(idle, false, 'a job still runs after a queued one was aborted');
  h.submit('long', 100);
  await h.finish('a');
  assert.equal(idle, false, 'long runs');
  h.submit('short', 5); // pauses long
  await h.finish('short');
  assert.equal(idle, false, 'long resumed');
  await h.finish('long');
  assert.equal(idle, true);
});

test("a job's abort listener leaves its signal once it starts, is aborted, or is dropped by abortWaiting", async () => {
  const h = harness({ threads: 1, slots: 1, capacity: 10 });
  const listeners = (c: AbortController) => getEventListeners(c.signal, 'abort').length;
  const started = new AbortController();
  h.submit('a', 10, started.signal);
  assert.equal(listeners(started), 0, 'started at once');
  const later = new AbortController();
  h.submit('b', 10, later.signal);
  assert.equal(listeners(later), 1, 'waiting');
  const aborted = new AbortController();
  const c = h.submit('c', 10, aborted.signal);
  aborted.abort();
  await assert.rejects(c, AbortedError);
  assert.equal(listeners(aborted), 0, 'aborted while waiting');
  const dropped = new AbortController();
  const d = h.submit('d', 10, dropped.signal);
  await h.finish('a');
  assert.equal(listeners(later), 0, 'b started');
  h.s.abortWaiting();
  await assert.rejects(d, AbortedError);
  assert.equal(listeners(dropped), 0, 'dropped by abortWaiting');
});

test('no retry timer runs unless a preemption waits for its victim to start', async () => {
  let calls = 0;
  let now = 0;
  const s = new Scheduler({ threads: 1, slots: 1, capacity: 10, now: () => (calls++, now) });
  const finishers: (() => void)[] = [];
  const job = (cost: number) => s.submit(cost, undefined, ({ attach }) => {
    attach({ pause: () => {}, resume: () => {} });
    return new Promise<void>((resolve) => finishers.push(resolve));
  });
  void job(120);
  now = 60_000; // aged past a new short job: no victim, nothing to retry
  void job(5);
  const before = calls;
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(calls, before, 'nothing looked again');
  for (const f of finishers.splice(0)) f();
  await new Promise((r) => setImmediate(r));
  for (const f of finishers.splice(0)) f();
  await s.idle();
});

test('one owner holds at most its share of the queue; another owner still gets in, and the share frees as its jobs start', async () => {
  const h = harness({ threads: 1, slots: 1, capacity: 4, ownerCapacity: 2 });
  const results: Promise<unknown>[] = [];
  results.push(h.submit('a0', 5, undefined, true, 'a')); // starts at once: no queue place taken
  results.push(h.submit('a1', 5, undefined, true, 'a'), h.submit('a2', 5, undefined, true, 'a'));
  assert.equal(h.s.isOwnerFull('a'), true);
  assert.equal(h.s.isOwnerFull('b'), false);
  assert.equal(h.s.isFull(), false, 'the queue itself has room');
  const refused = await h.submit('a3', 5, undefined, true, 'a').catch((e: unknown) => e);
  assert.ok(refused instanceof OwnerShareFullError && !(refused instanceof QueueFullError));
  assert.equal((refused as OwnerShareFullError).share, 2);
  results.push(h.submit('b1', 5, undefined, true, 'b'));
  assert.equal(h.s.stats().waiting, 3);
  await h.finish('a0');
  assert.deepEqual(h.started, ['a0:1', 'b1:1'], 'b, served less, goes next');
  assert.equal(h.s.isOwnerFull('a'), true);
  await h.finish('b1');
  assert.deepEqual(h.started, ['a0:1', 'b1:1', 'a1:1']);
  assert.equal(h.s.isOwnerFull('a'), false, 'one of a\'s jobs left the queue for the slot');
  await h.finish('a1');
  await h.finish('a2');
  assert.deepEqual(await Promise.all(results), ['a0', 'a1', 'a2', 'b1']);
});

test('the share never exceeds the queue, and without owners there is none', async () => {
  const h = harness({ threads: 1, slots: 1, capacity: 1, ownerCapacity: 5 });
  assert.equal(h.s.stats().ownerCapacity, 1);
  void h.submit('x', 1);
  void h.submit('y', 1);
  assert.equal(h.s.isOwnerFull(undefined), false);
  assert.ok((await h.submit('z', 1).catch((e: unknown) => e)) instanceof QueueFullError);
});

test('a queue of none or one place has no separate share: a full queue is refused as full, whoever sends', async () => {
  for (const capacity of [0, 1]) {
    const h = harness({ threads: 1, slots: 1, capacity, ownerCapacity: 1 });
    void h.submit('running', 1, undefined, true, 'a');
    if (capacity === 1) void h.submit('waiting', 1, undefined, true, 'a');
    assert.equal(h.s.isOwnerFull('a'), false, `capacity ${capacity}`);
    assert.ok((await h.submit('refused', 1, undefined, true, 'a').catch((e: unknown) => e)) instanceof QueueFullError, `capacity ${capacity}`);
  }
});

test('background jobs run only on a slot nothing else waits for, in arrival order, and take no place in the queue', async () => {
  const h = harness({ threads: 1, slots: 1, capacity: 1 });
  const done = [h.background('bg-long', 600), h.background('bg-short', 5)];
  assert.deepEqual(h.started, ['bg-long:1'], 'arrival order, not shortest first');
  assert.equal(h.s.estimatedWaitSeconds(), 0, 'background jobs give way: no wait for a new request');
  assert.equal(h.s.isFull(), false);
  void h.submit('clip', 5);
  assert.deepEqual(h.started, ['bg-long:1', 'clip:1'], 'a request takes the slot at once');
  assert.deepEqual(h.events, ['pause bg-long']);
  void h.submit('queued', 5);
  assert.equal(h.s.isFull(), true, 'the one place is taken by a request, not by the background');
  assert.deepEqual(h.s.stats(), { running: 2, paused: 1, waiting: 1, preemptions: 0, background: 2, capacity: 1, ownerCapacity: 1, slots: 1, threadsPerJob: 1 },
    'preemptions count requests paused for requests');
  await h.finish('clip');
  assert.deepEqual(h.started, ['bg-long:1', 'clip:1', 'queued:1'], 'a waiting request goes before the paused background job');
  await h.finish('queued');
  assert.deepEqual(h.events, ['pause bg-long', 'resume bg-long']);
  await h.finish('bg-long');
  assert.deepEqual(h.started.at(-1), 'bg-short:1');
  await h.finish('bg-short');
  assert.deepEqual(await Promise.all(done), ['bg-long', 'bg-short']);
  await h.s.idle();
});

test('a background job never takes the slot of a paused request, and gives its place in the pause budget up to one', async () => {
  const h = harness({ threads: 1, slots: 1, capacity: 10, maxPaused: 1 });
  void h.submit('long', 120);
  const first = h.background('bg', 60).catch((e: unknown) => e);
  void h.submit('short', 2);
  assert.deepEqual(h.events, ['pause long']);
  await h.finish('short');
  assert.deepEqual(h.started, ['long:1', 'short:1'], 'the paused request resumes, not the background job');
  assert.deepEqual(h.events, ['pause long', 'resume long']);
  await h.finish('long');
  assert.deepEqual(h.started.at(-1), 'bg:1');
  const second = h.background('bg-2', 60); // waits behind bg
  void h.submit('long-2', 120);
  assert.deepEqual(h.events.slice(2), ['pause bg'], 'the background job gives its slot to the first request');
  // The one pause allowed is the background job's: it gives it up to the short request, which pauses long-2.
  void h.submit('short-2', 2);
  assert.deepEqual(h.events.slice(3), ['evict bg', 'pause long-2']);
  assert.deepEqual(h.started.slice(-2), ['long-2:1', 'short-2:1']);
  assert.ok((await first) instanceof EvictedError);
  await h.finish('short-2');
  await h.finish('long-2');
  assert.deepEqual(h.started.at(-1), 'bg-2:1', 'the background lane goes on once the requests are done');
  await h.finish('bg-2');
  assert.equal(await second, 'bg-2');
  await h.s.idle();
});

test('an evicted background job is rejected with EvictedError; with no pause to be had, a request evicts it rather than wait', async () => {
  for (const opts of [{ maxPaused: 0 }, { order: 'arrival' as const }]) {
    const h = harness({ threads: 1, slots: 1, capacity: 10, ...opts });
    const bg = h.background('bg', 300);
    void h.submit('clip', 5);
    assert.deepEqual(h.events, ['evict bg'], JSON.stringify(opts));
    assert.ok((await bg.catch((e: unknown) => e)) instanceof EvictedError, 'its owner submits it again');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(h.started, ['bg:1', 'clip:1'], 'the request starts once the native call has returned');
    await h.finish('clip');
    await h.s.idle();
  }
});

test('a waiting background job is removed by its signal and by abortWaiting', async () => {
  const h = harness({ threads: 1, slots: 1, capacity: 10 });
  void h.submit('clip', 5);
  const cancel = new AbortController();
  const cancelled = h.background('cancelled', 60, cancel.signal);
  const dropped = h.background('dropped', 60);
  cancel.abort();
  assert.ok((await cancelled.catch((e: unknown) => e)) instanceof AbortedError);
  assert.equal(h.s.stats().background, 1);
  h.s.abortWaiting();
  assert.ok((await dropped.catch((e: unknown) => e)) instanceof AbortedError);
  await h.finish('clip');
  assert.deepEqual(h.started, ['clip:1'], 'neither ran');
  await h.s.idle();
});
