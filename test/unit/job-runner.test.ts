// The job runner's loop against a store whose calls the test answers
// (src/jobs/runner.ts): what happens around a shutdown and a failing database.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { JobRunner, MAX_STARTS, type JobRunnerOptions } from '../../src/jobs/runner';
import { createLogger } from '../../src/log';
import { Semaphore } from '../../src/stt/semaphore';
import type { Job, JobStore } from '../../src/store/jobs';
import type { Backends } from '../../src/stt/backends';
import { wav16k } from '../../fixtures';

const job = { id: 'job_1', keyId: 'k', status: 'running', form: '{}', spool: '/nowhere/job_1', secondsTotal: 10, secondsDone: 0, partial: null, result: null, error: null, callbackUrl: null, callbackState: null, callbackAttempts: 0, starts: 1, createdAt: 0, startedAt: 0, finishedAt: null } satisfies Job;

function runnerWith(store: Partial<JobStore>, keyRevoked?: (keyId: string) => Promise<boolean>, extra: Partial<JobRunnerOptions> = {}): { runner: JobRunner; calls: string[] } {
  const calls: string[] = [];
  const logged = new Proxy(store, {
    get: (target, name) => {
      const fn = (target as Record<string | symbol, unknown>)[name];
      return typeof fn === 'function' ? (...args: unknown[]) => (calls.push(String(name)), fn(...args)) : fn;
    },
  });
  const stt = { transcribe: () => Promise.reject(new Error('no transcription expected')) } as unknown as Backends;
  const runner = new JobRunner({
    store: logged as JobStore, stt, decodeSlots: new Semaphore(1), spoolDir: mkdtempSync(path.join(os.tmpdir(), 'stt-spool-')), owner: 'me',
    maxAudioSeconds: 60, retentionMs: 1000, leaseMs: 30_000, alone: true, logger: createLogger('silent'), keyRevoked, ...extra,
  });
  return { runner, calls };
}

const base: Partial<JobStore> = { requeueRunning: async () => 0, sweep: async () => [], get: async () => undefined, release: async () => true };

test('a job claimed while the runner stops goes straight back to the queue, unrun', async () => {
  let answer!: (j: Job | undefined) => void;
  const { runner, calls } = runnerWith({ ...base, claim: () => new Promise<Job | undefined>((r) => (answer = r)) });
  await runner.start();
  const stopped = runner.stop();
  answer(job);
  await stopped;
  assert.deepEqual(calls.filter((c) => c !== 'get'), ['requeueRunning', 'sweep', 'claim', 'release']);
});

test('a database that fails the runner is logged and tried again, and never takes the process down', async () => {
  let claims = 0;
  const { runner } = runnerWith({
    ...base,
    claim: async () => {
      claims++;
      throw new Error('connection refused');
    },
  });
  await runner.start();
  // Tried again after the failure (at the next poll, or sooner when woken): a second claim, within a bound.
  for (const until = Date.now() + 15_000; claims < 2 && Date.now() < until; ) {
    runner.wake();
    await new Promise((r) => setTimeout(r, 20));
  }
  await runner.stop();
  assert.ok(claims >= 2, `${claims} claims: the runner stopped trying after a failure`);
});

test('a job taken up MAX_STARTS times whose process never handed it back is failed (job_crashed), not run a fourth time', async () => {
  const failed: string[] = [];
  let claimed = false;
  const { runner, calls } = runnerWith({
    ...base,
    claim: async () => (claimed ? undefined : ((claimed = true), { ...job, starts: MAX_STARTS + 1 })),
    fail: async (_id: string, _owner: string, error: string) => (failed.push(error), true),
    forgetSpool: async () => undefined,
  });
  await runner.start();
  for (let i = 0; i < 100 && !failed.length; i++) await new Promise((r) => setTimeout(r, 10));
  await runner.stop();
  assert.equal(JSON.parse(failed[0]).error.code, 'job_crashed');
  assert.ok(!calls.includes('renew') && !calls.includes('progress'), 'never run');
});

test('a job whose key was revoked is cancelled when it comes up, not run', async () => {
  const cancelled: string[] = [];
  let claimed = false;
  const { runner, calls } = runnerWith({
    ...base,
    claim: async () => (claimed ? undefined : ((claimed = true), job)),
    cancel: async (id: string) => (cancelled.push(id), job),
    forgetSpool: async () => undefined,
  }, async (keyId) => keyId === job.keyId);
  await runner.start();
  for (let i = 0; i < 500 && !cancelled.length; i++) await new Promise((r) => setTimeout(r, 10));
  await runner.stop();
  assert.deepEqual(cancelled, [job.id]);
  assert.ok(!calls.includes('fail') && !calls.includes('renew') && !calls.includes('progress'), `never run: ${calls.join(', ')}`);
});

test('a job whose key is still being read when the runner stops goes back to the queue, unrun', async () => {
  let answerKey!: (revoked: boolean) => void;
  let claimed = false;
  let asked!: () => void;
  const keyAsked = new Promise<void>((r) => (asked = r));
  const { runner, calls } = runnerWith({
    ...base,
    claim: async () => (claimed ? undefined : ((claimed = true), job)),
  }, () => {
    asked();
    return new Promise<boolean>((r) => (answerKey = r));
  });
  await runner.start();
  await keyAsked;
  const stopped = runner.stop();
  answerKey(false);
  await stopped;
  // Before, stop() found nothing running to abort, and the whole recording was transcribed before it returned.
  assert.deepEqual(calls.filter((c) => c !== 'get'), ['requeueRunning', 'sweep', 'claim', 'release']);
});

test('a finished job\'s answer the store keeps refusing is asked again while the lease is held, then the job fails result_not_stored (not job_crashed)', async () => {
  const spoolDir = mkdtempSync(path.join(os.tmpdir(), 'stt-spool-'));
  writeFileSync(path.join(spoolDir, 'job_1'), wav16k(new Float32Array(16000)));
  const form = { task: 'transcribe', format: 'json', granularities: [] };
  // The engine answers at once; the store takes every write but the answer's.
  const stt = { local: { transcribe: async () => ({ result: { text: ' Hello.', segments: [], language: 'en', duration: 1 } }) } } as unknown as Backends;
  const failed: string[] = [];
  let finishes = 0;
  let claimed = false;
  const { runner, calls } = runnerWith({
    ...base,
    claim: async () => (claimed ? undefined : ((claimed = true), { ...job, form: JSON.stringify(form), spool: 'job_1' })),
    progress: async () => true,
    renew: async () => true,
    finish: async () => {
      finishes++;
      throw new Error('SQLITE_FULL: database or disk is full');
    },
    fail: async (_id: string, _owner: string, error: string) => (failed.push(error), true),
    forgetSpool: async () => undefined,
  }, undefined, { stt, spoolDir, finishRetryMs: [10, 10, 10] });
  await runner.start();
  for (let i = 0; i < 500 && !failed.length; i++) await new Promise((r) => setTimeout(r, 10));
  await runner.stop();
  assert.equal(finishes, 4, 'the first try and three more');
  assert.equal(JSON.parse(failed[0]).error.code, 'result_not_stored');
  assert.ok(!calls.includes('release'), `kept, not handed back: ${calls.join(', ')}`);
});
