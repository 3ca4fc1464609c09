// The request deadline fires even when a garbage collection runs before it
// (AbortSignal.timeout() inside AbortSignal.any() does not: nodejs/node#57736).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { deadline } from '../../src/net/deadline';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether a signal built by `make`, combined as the transcription route combines it, has fired 1 s after a 100-ms deadline with a GC in between. */
async function firesAfterGc(make: (ms: number) => AbortSignal): Promise<boolean> {
  const client = new AbortController();
  const combined = AbortSignal.any([client.signal, make(100)]);
  let fired = false;
  combined.addEventListener('abort', () => (fired = true), { once: true });
  await sleep(20);
  gc();
  await sleep(1000); // ten times the deadline
  return fired && combined.aborted;
}

test('deadline() fires after a garbage collection, as the route combines it', async () => {
  // With (ms) => AbortSignal.timeout(ms) here, as the route had it, this fails on Node 20.20.
  assert.equal(await firesAfterGc((ms) => deadline(ms).signal), true);
});

test('clear() stops a deadline that is no longer needed', async () => {
  const d = deadline(50);
  d.clear();
  await sleep(500);
  assert.equal(d.signal.aborted, false);
});
