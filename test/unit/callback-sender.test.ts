// The job callback sender (src/jobs/callbacks.ts) against real HTTP receivers
// on loopback and a store whose calls the test answers: a receiver that never
// answers is given up on at the attempt's timeout (also after a GC: the
// timeout must not be collectable), a redirect is a failure and not followed,
// the sixth failure gives up, a shutdown mid-attempt records nothing.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { CallbackSender, RETRY_DELAYS_MS } from '../../src/jobs/callbacks';
import { createLogger } from '../../src/log';
import { SecretBox } from '../../src/store/secret-box';
import type { Job, JobStore } from '../../src/store/jobs';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const hits: string[] = [];
const held: http.ServerResponse[] = [];
const receiver = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c));
  req.on('end', () => {
    hits.push(`${req.url} ${req.headers['stt-signature'] ?? ''} ${body}`);
    if (req.url === '/hang') held.push(res); // never answered
    else if (req.url === '/redirect') res.writeHead(302, { Location: '/ok' }).end();
    else if (req.url === '/fail') res.writeHead(500).end();
    else res.writeHead(200).end('ok');
  });
});
const listening = new Promise<string>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(receiver.address() as { port: number }).port}`)));
after(() => {
  for (const res of held) res.destroy();
  receiver.close();
});

const box = SecretBox.open(mkdtempSync(path.join(os.tmpdir(), 'stt-box-')), 'ab'.repeat(32));

function jobAt(url: string, attempts = 0): Job {
  return { id: 'job_1', keyId: 'k1', status: 'done', form: '{}', spool: null, secondsTotal: 3, secondsDone: 3, partial: null, result: '{"text":"hi"}', error: null, callbackUrl: url, callbackState: 'pending', callbackAttempts: attempts, starts: 1, createdAt: 0, startedAt: 0, finishedAt: 1 };
}

type Outcome = { delivered: true } | { delivered: false; retryAt: number | null };

/** A sender whose store hands out `job` once and reports the attempt's recorded outcome. */
function senderFor(job: Job, attemptTimeoutMs: number, keyRevoked?: (keyId: string) => Promise<boolean>) {
  let handed = false;
  let record!: (o: Outcome) => void;
  const recorded = new Promise<Outcome>((resolve) => (record = resolve));
  const outcomes: Outcome[] = [];
  const store = {
    claimCallback: async () => {
      if (handed) return undefined;
      handed = true;
      return { job, hold: 12345 };
    },
    callbackAttempted: async (id: string, hold: number, outcome: Outcome) => {
      assert.deepEqual([id, hold], [job.id, 12345]);
      outcomes.push(outcome);
      record(outcome);
    },
  } as unknown as JobStore;
  const sender = new CallbackSender({ store, box, rules: { allowInsecureLoopback: true, allowPrivate: true }, userAgent: 'test', logger: createLogger('silent'), attemptTimeoutMs, keyRevoked });
  return { sender, recorded, outcomes };
}

/** Waits for `p`, failing after `ms` instead of hanging the suite. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms).unref())]);
}

test('a delivered callback is signed with the key\'s secret over its timestamp and body', async () => {
  const { sender, recorded } = senderFor(jobAt(`${await listening}/ok`), 2_000);
  sender.start();
  assert.deepEqual(await within(recorded, 10_000, 'delivery'), { delivered: true });
  await sender.stop();
  const [, sig, body] = /^\/ok (\S+) (.*)$/.exec(hits.at(-1)!)!;
  const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(sig)!;
  assert.equal(v1, createHmac('sha256', sender.secretFor('k1')).update(`${t}.${body}`).digest('hex'));
  assert.equal(JSON.parse(body).id, 'job_1');
});

test('a receiver that never answers fails the attempt at its timeout, even with garbage collected meanwhile, and it is tried again later', async () => {
  const { sender, recorded } = senderFor(jobAt(`${await listening}/hang`), 300);
  sender.start();
  const collecting = setInterval(gc, 20);
  try {
    const outcome = await within(recorded, 20_000, 'the hanging attempt');
    assert.equal(outcome.delivered, false);
    assert.ok(!outcome.delivered && outcome.retryAt !== null && outcome.retryAt > Date.now(), 'a retry is scheduled');
  } finally {
    clearInterval(collecting);
    await sender.stop();
  }
});

test('a redirect is a failed attempt and is not followed', async () => {
  const before = hits.length;
  const { sender, recorded } = senderFor(jobAt(`${await listening}/redirect`), 2_000);
  sender.start();
  const outcome = await within(recorded, 10_000, 'the redirected attempt');
  await sender.stop();
  assert.equal(outcome.delivered, false);
  assert.deepEqual(hits.slice(before).map((h) => h.split(' ')[0]), ['/redirect'], 'the Location was never fetched');
});

test('the sixth failed attempt gives up (no retry time); the fifth still schedules one', async () => {
  const url = `${await listening}/fail`;
  assert.equal(RETRY_DELAYS_MS.length, 5);
  const fifth = senderFor(jobAt(url, 4), 2_000);
  fifth.sender.start();
  const o5 = await within(fifth.recorded, 10_000, 'the fifth attempt');
  await fifth.sender.stop();
  assert.ok(!o5.delivered && o5.retryAt !== null);
  const sixth = senderFor(jobAt(url, 5), 2_000);
  sixth.sender.start();
  assert.deepEqual(await within(sixth.recorded, 10_000, 'the sixth attempt'), { delivered: false, retryAt: null });
  await sixth.sender.stop();
});

test('a shutdown during an attempt records nothing: the hold runs out and another process tries it', async () => {
  const before = hits.length;
  const { sender, outcomes } = senderFor(jobAt(`${await listening}/hang`), 60_000);
  sender.start();
  for (const until = Date.now() + 10_000; hits.length === before && Date.now() < until; ) await new Promise((r) => setTimeout(r, 10));
  assert.equal(hits.length, before + 1, 'the attempt reached the receiver');
  await within(sender.stop(), 10_000, 'stop');
  assert.deepEqual(outcomes, []);
});

test('a job whose key was revoked is not called back: given up unsent', async () => {
  const before = hits.length;
  const asked: string[] = [];
  const { sender, recorded } = senderFor(jobAt(`${await listening}/ok`), 2_000, async (keyId) => (asked.push(keyId), true));
  sender.start();
  assert.deepEqual(await within(recorded, 10_000, 'the revoked key\'s attempt'), { delivered: false, retryAt: null });
  await sender.stop();
  assert.deepEqual(asked, ['k1']);
  assert.equal(hits.length, before, 'nothing reached the receiver');
});
