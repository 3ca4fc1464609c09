// The thread count that follows the cores other processes leave free.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import os from 'node:os';
import { decoderThreadsFollowing, FreeCoresMonitor, freeCoresBetween, othersBusyBetween, parseCpuList, readCpuSample, threadsForFreeCores } from '../../src/stt/local/free-cores';
import { Scheduler } from '../../src/stt/local/scheduler';

test('free cores: the cores less what other processes used, never below zero', () => {
  const a = { at: 0, busy: 100, own: 10 };
  // Over 2 s the machine was busy 3 s, 1 s of it ours: others used one core.
  assert.equal(freeCoresBetween(a, { at: 2000, busy: 103, own: 11 }, 2), 1);
  // All the busy time was ours: every core is free to us.
  assert.equal(freeCoresBetween(a, { at: 2000, busy: 104, own: 14 }, 2), 2);
  // Others used more than there is (rounding of the tick counts): none free, not negative.
  assert.equal(freeCoresBetween(a, { at: 1000, busy: 103, own: 10 }, 2), 0);
  // No time passed: assume everything is free.
  assert.equal(freeCoresBetween(a, a, 2), 2);
});

test('free cores never exceed the CPU quota, which does not take the others\' use off', () => {
  const a = { at: 0, busy: 100, own: 10 };
  const othersUsedOne = { at: 2000, busy: 103, own: 11 };
  const othersIdle = { at: 2000, busy: 104, own: 14 };
  assert.equal(freeCoresBetween(a, othersIdle, 2, 1), 1);
  assert.equal(freeCoresBetween(a, othersIdle, 2, 1.5), 1.5);
  // Others used one core of two; a quota of 1.5 still leaves the one core that is free.
  assert.equal(freeCoresBetween(a, othersUsedOne, 2, 1.5), 1);
  assert.equal(freeCoresBetween(a, othersUsedOne, 2, 0.5), 0.5);
  assert.equal(freeCoresBetween(a, othersUsedOne, 2, null), 1);
  // A quota above the CPUs caps nothing.
  assert.equal(freeCoresBetween(a, othersIdle, 2, 4), 2);
});

test('the monitor reads the quota at start and again at every sample', { skip: process.platform !== 'linux' }, async () => {
  let quota: number | null = 1;
  let reads = 0;
  const monitor = new FreeCoresMonitor(2, 20, () => (reads++, quota));
  try {
    assert.equal(monitor.freeCores(), 1);
    assert.equal(reads, 1, 'read once at start');
    // A quota changed while the server runs (docker update --cpus) is followed at the next sample.
    quota = 0.25;
    const until = Date.now() + 5000;
    while ((reads < 3 || monitor.freeCores() > 0.25) && Date.now() < until) await sleep(20);
    // Read again at the samples (a busy machine alone could also bring the free cores under 0.25).
    assert.ok(reads >= 3, `the quota was read ${reads} times`);
    assert.ok(monitor.freeCores() <= 0.25, `free cores ${monitor.freeCores()} under a quota of 0.25`);
  } finally {
    monitor.close();
  }
});

test('the CPU list of an affinity mask', () => {
  assert.deepEqual([...parseCpuList('0-3,6')], [0, 1, 2, 3, 6]);
  assert.deepEqual([...parseCpuList('1')], [1]);
});

test('threads for the free cores: one per free core, rounded, at least one, never over the share', () => {
  // Two slots of one thread each on two free cores: one each, not two.
  assert.equal(threadsForFreeCores(1, 2, 2), 1);
  assert.equal(threadsForFreeCores(2, 4, 4), 2);
  assert.equal(threadsForFreeCores(2, 2, 4), 1);
  assert.equal(threadsForFreeCores(2, 2), 2);
  assert.equal(threadsForFreeCores(2, 1.8), 2); // a process busy a fifth of the time does not cost a thread
  assert.equal(threadsForFreeCores(2, 1.2), 1);
  assert.equal(threadsForFreeCores(2, 0), 1);
  assert.equal(threadsForFreeCores(1, 4), 1);
  assert.equal(threadsForFreeCores(4, 2.6), 3);
});

test('a busy process is seen in /proc and this process\'s own work is not', { skip: process.platform !== 'linux', concurrency: false }, async () => {
  // Our own busy loop is not another process's: read beside it, then beside a busy child.
  const a = readCpuSample()!;
  const until = Date.now() + 700;
  while (Date.now() < until);
  const b = readCpuSample()!;
  const hog = spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' });
  try {
    await sleep(300);
    const c = readCpuSample()!;
    await sleep(700);
    const d = readCpuSample()!;
    const [own, other] = [othersBusyBetween(a, b), othersBusyBetween(c, d)];
    // Whatever else the machine runs shows in both readings; the child adds most of a core.
    assert.ok(other - own > 0.6, `others' use beside our own work ${own}, beside a busy process ${other} (${os.availableParallelism()} cores)`);
  } finally {
    hog.kill();
  }
});

test('the scheduler starts a job with its share of threads, and the decoder with those decoderThreadsFor gives', async () => {
  const shares: number[] = [];
  const s = new Scheduler({ threads: 4, slots: 2, capacity: 4, decoderThreadsFor: (share) => (shares.push(share), 1) });
  assert.deepEqual(await s.submit(1, undefined, async ({ threads, decoderThreads }) => ({ threads, decoderThreads })), { threads: 2, decoderThreads: 1 });
  assert.deepEqual(shares, [2]);
  const plain = new Scheduler({ threads: 2, slots: 1, capacity: 4 });
  assert.deepEqual(await plain.submit(1, undefined, async ({ threads, decoderThreads }) => ({ threads, decoderThreads })), { threads: 2, decoderThreads: 2 });
});

test('the server\'s decoder threads: the slot\'s share of the cores the monitor saw free at the job\'s start', () => {
  let free = 4;
  const forShare = decoderThreadsFollowing({ freeCores: () => free }, 4);
  assert.equal(forShare(4), 4);
  assert.equal(forShare(2), 2);
  free = 2; // another process took half the host: a slot of half the threads gets one
  assert.equal(forShare(2), 1);
  assert.equal(forShare(4), 2);
  free = 0;
  assert.equal(forShare(2), 1);
});
