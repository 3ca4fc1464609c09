// The job store on both backends (a real SQLite file, a real PostgreSQL
// server in a temporary directory): every status a job passes through, key
// scoping, leases taken, renewed, lost and taken over, the restart of a lone
// process, cancellation, retention and the counts the metrics read.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/store/open-database';
import { JobStore, type NewJob } from '../../src/store/jobs';
import { TempPostgres } from '../../fixtures/postgres';

type Backend = 'sqlite' | 'postgres';
let postgres: Promise<TempPostgres> | null = null;
after(async () => (await postgres)?.destroy());

/** A store on a fresh database of the backend, with a clock the test moves. */
async function withStore(backend: Backend, fn: (store: JobStore, clock: { now: number }) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'stt-jobs-'));
  const databaseUrl = backend === 'postgres' ? await (await (postgres ??= TempPostgres.create())).newDatabase() : null;
  const db = await openDatabase({ dataDir: dir, databaseUrl });
  const clock = { now: 1_800_000_000_000 };
  try {
    await fn(new JobStore(db, () => clock.now), clock);
  } finally {
    await db.close();
  }
}

const job = (id: string, keyId = 'key-a'): NewJob => ({ id, keyId, form: JSON.stringify({ response_format: 'json' }), spool: `/spool/${id}`, secondsTotal: 1800, callbackUrl: null });
const LEASE = 30_000;

for (const backend of ['sqlite', 'postgres'] as const) {
  test(`${backend}: a job goes queued → running → done, seen only by its key`, async () => {
    await withStore(backend, async (store, clock) => {
      const created = await store.create(job('j1'));
      assert.equal(created.status, 'queued');
      assert.equal(created.createdAt, clock.now);
      assert.equal(await store.get('j1', 'key-b'), undefined, 'another key does not see it');
      assert.equal((await store.get('j1', 'key-a'))?.id, 'j1');

      clock.now += 1000;
      const claimed = await store.claim('replica-1', LEASE);
      assert.equal(claimed?.status, 'running');
      assert.equal(claimed?.startedAt, clock.now);
      assert.equal(await store.claim('replica-2', LEASE), undefined, 'a running job under its lease is not claimed again');

      assert.equal(await store.progress('j1', 'replica-1', 600, '{"text":"so far"}'), true);
      assert.equal((await store.get('j1'))?.secondsDone, 600);
      assert.equal(await store.finish('j1', 'replica-1', '{"text":"all"}'), true);
      const done = await store.get('j1');
      assert.equal(done?.status, 'done');
      assert.equal(done?.result, '{"text":"all"}');
      assert.equal(done?.secondsDone, 1800);
      assert.equal(done?.partial, null);
      assert.equal(await store.finish('j1', 'replica-1', 'again'), false, 'an ended job is not finished twice');
    });
  });

  test(`${backend}: a lease that runs out lets another process take the job; the first can then write nothing`, async () => {
    await withStore(backend, async (store, clock) => {
      await store.create(job('j1'));
      await store.claim('replica-1', LEASE);
      clock.now += LEASE - 1;
      assert.equal(await store.renew('j1', 'replica-1', LEASE), true);
      clock.now += LEASE + 1;
      const taken = await store.claim('replica-2', LEASE);
      assert.equal(taken?.id, 'j1');
      assert.equal(await store.renew('j1', 'replica-1', LEASE), false);
      assert.equal(await store.progress('j1', 'replica-1', 900, '{}'), false);
      assert.equal(await store.finish('j1', 'replica-1', 'stale'), false);
      assert.equal(await store.fail('j1', 'replica-2', '{"error":{"code":"x"}}'), true);
      assert.equal((await store.get('j1'))?.status, 'failed');
    });
  });

  test(`${backend}: oldest first; release puts a job back; a lone process requeues what was running`, async () => {
    await withStore(backend, async (store, clock) => {
      await store.create(job('old'));
      clock.now += 10;
      await store.create(job('new'));
      assert.equal((await store.claim('r1', LEASE))?.id, 'old');
      assert.equal(await store.release('old', 'r1'), true);
      assert.equal((await store.get('old'))?.status, 'queued');
      assert.equal((await store.claim('r2', LEASE))?.id, 'old', 'released, it is the oldest again');
      assert.equal((await store.claim('r2', LEASE))?.id, 'new');
      assert.equal(await store.requeueRunning(), 2);
      const counts = await store.counts();
      assert.deepEqual({ queued: counts.queued, running: counts.running }, { queued: 2, running: 0 });
      assert.equal(counts.oldestQueuedMs, 10);
    });
  });

  test(`${backend}: keys take turns: a key with many jobs queued does not hold back another's; a started job goes on first`, async () => {
    await withStore(backend, async (store, clock) => {
      for (const [id, key] of [['a1', 'key-a'], ['a2', 'key-a'], ['a3', 'key-a'], ['b1', 'key-b'], ['b2', 'key-b'], ['c1', 'key-c']]) {
        await store.create(job(id, key));
        clock.now += 1;
      }
      const order: string[] = [];
      for (let claimed; (claimed = await store.claim('r1', LEASE)); ) {
        order.push(claimed.id);
        clock.now += 1000;
        if (claimed.id === 'a2' && !order.slice(0, -1).includes('a2')) {
          await store.release('a2', 'r1'); // a restart: a2 goes back to the queue, and on before anyone's next
          continue;
        }
        assert.equal(await store.finish(claimed.id, 'r1', 'text'), true);
      }
      assert.deepEqual(order, ['a1', 'b1', 'c1', 'a2', 'a2', 'b2', 'a3']);
    });
  });

  test(`${backend}: a claim counts a start, a clean release hands it back; a job whose process died keeps it`, async () => {
    await withStore(backend, async (store, clock) => {
      await store.create(job('j'));
      assert.equal((await store.claim('r1', LEASE))?.starts, 1);
      await store.release('j', 'r1');
      assert.equal((await store.get('j'))?.starts, 0, 'handed back at shutdown: not counted');
      await store.claim('r1', LEASE);
      clock.now += LEASE + 1; // r1 died: its lease ran out
      assert.equal((await store.claim('r2', LEASE))?.starts, 2);
      assert.equal(await store.requeueRunning(), 1); // r2 died too, alone on its SQLite file
      assert.equal((await store.claim('r3', LEASE))?.starts, 3);
    });
  });

  test(`${backend}: with replicas, a key with a job running waits behind a key with none`, async () => {
    await withStore(backend, async (store, clock) => {
      for (const [id, key] of [['a1', 'key-a'], ['b0', 'key-b'], ['a2', 'key-a'], ['b1', 'key-b']]) {
        await store.create(job(id, key));
        clock.now += 1;
      }
      assert.equal((await store.claim('r1', LEASE))?.id, 'a1'); // a long one: still running below
      clock.now += 1000;
      assert.equal((await store.claim('r2', LEASE))?.id, 'b0');
      await store.finish('b0', 'r2', 'text');
      clock.now += 1000;
      // key-a's last start is the older, but a1 still runs on r1: key-b goes first.
      assert.equal((await store.claim('r2', LEASE))?.id, 'b1');
      assert.equal((await store.claim('r3', LEASE))?.id, 'a2');
    });
  });

  test(`${backend}: cancel once, remove only once ended; sweep removes ended jobs past retention and names their spools`, async () => {
    await withStore(backend, async (store, clock) => {
      await store.create(job('a'));
      await store.create(job('b', 'key-b'));
      assert.equal(await store.remove('a'), false, 'not ended');
      assert.equal((await store.cancel('a'))?.spool, '/spool/a');
      assert.equal(await store.cancel('a'), undefined, 'already cancelled');
      assert.equal((await store.get('a'))?.status, 'cancelled');
      await store.claim('r1', LEASE);
      await store.finish('b', 'r1', 'text');
      await store.forgetSpool('b');
      clock.now += 1000;
      assert.deepEqual(await store.sweep(clock.now - 2000), [], 'nothing ended before then');
      assert.deepEqual(await store.sweep(clock.now), ['/spool/a']);
      assert.equal(await store.get('a'), undefined);
      assert.equal(await store.get('b'), undefined);
    });
  });

  test(`${backend}: a callback is taken for one attempt at a time, one per key, and only its own attempt records`, async () => {
    await withStore(backend, async (store, clock) => {
      for (const [id, key] of [['c1', 'key-a'], ['c2', 'key-b']]) {
        await store.create({ ...job(id, key), callbackUrl: 'https://example.com/hook' });
        await store.claim('r1', LEASE);
        await store.finish(id, 'r1', 'text');
        clock.now += 1;
      }
      assert.equal((await store.get('c1'))?.callbackState, 'pending');
      const first = await store.claimCallback(15_000);
      assert.equal(first?.job.id, 'c1');
      assert.equal(await store.claimCallback(15_000, ['key-b']), undefined, 'c1 is held');
      assert.equal((await store.claimCallback(15_000, ['key-a']))?.job.id, 'c2', 'key-a has one in flight: key-b\'s goes');
      // c1's hold ran out and another process took it again: the first attempt's late outcome is not recorded.
      clock.now += 20_000;
      const again = await store.claimCallback(15_000, ['key-b']);
      assert.equal(again?.job.id, 'c1');
      await store.callbackAttempted('c1', first!.hold, { delivered: true });
      assert.deepEqual([(await store.get('c1'))?.callbackState, (await store.get('c1'))?.callbackAttempts], ['pending', 0]);
      await store.callbackAttempted('c1', again!.hold, { delivered: false, retryAt: clock.now + 1000 });
      assert.deepEqual([(await store.get('c1'))?.callbackState, (await store.get('c1'))?.callbackAttempts], ['pending', 1]);
      assert.equal(await store.unfinished('key-a'), 1, 'a pending callback counts against the key\'s jobs');
      clock.now += 1000;
      const last = await store.claimCallback(15_000, ['key-b']);
      await store.callbackAttempted('c1', last!.hold, { delivered: false, retryAt: null });
      assert.deepEqual([(await store.get('c1'))?.callbackState, await store.unfinished('key-a')], ['failed', 0]);
    });
  });

  test(`${backend}: a key's jobs newest first, paged, none skipped when several share a millisecond`, async () => {
    await withStore(backend, async (store, clock) => {
      for (const id of ['j1', 'j2', 'j3']) {
        await store.create(job(id));
        clock.now += 1;
      }
      // Created in the same millisecond: the page boundary falls between them.
      clock.now -= 1;
      await store.create(job('j4'));
      await store.create(job('other', 'key-b'));
      const first = await store.list('key-a', 1);
      assert.deepEqual(first.map((j) => j.id), ['j4']);
      const second = await store.list('key-a', 2, first[0]);
      assert.deepEqual(second.map((j) => j.id), ['j3', 'j2'], 'j3, of j4\'s millisecond, is not skipped');
      assert.deepEqual((await store.list('key-a', 2, second[1])).map((j) => j.id), ['j1']);
      assert.equal((await store.list(null, 10)).length, 5, 'the admin list has every key');
      assert.equal(await store.unfinished('key-a'), 4);
    });
  });

  test(`${backend}: a list carries no answers nor checkpoints, and otherwise the jobs as get() reads them; a page's position reads only the place`, async () => {
    await withStore(backend, async (store) => {
      await store.create(job('running'));
      await store.claim('replica-1', LEASE);
      assert.equal(await store.progress('running', 'replica-1', 30, '{"text":"so far"}'), true);
      await store.create(job('done'));
      await store.claim('replica-1', LEASE);
      assert.equal(await store.finish('done', 'replica-1', '{"text":"all of it"}'), true);
      const list = await store.list('key-a', 10);
      assert.deepEqual(list.map((j) => j.id).sort(), ['done', 'running']);
      assert.deepEqual(await store.position('done', 'key-a'), { id: 'done', createdAt: (await store.get('done'))!.createdAt });
      assert.equal(await store.position('done', 'key-b'), undefined, 'another key\'s job has no place in this key\'s list');
      for (const listed of list) {
        const full = (await store.get(listed.id))!;
        assert.ok(full.result !== null || full.partial !== null, `${listed.id} has an answer or a checkpoint to leave out`);
        assert.deepEqual(listed, { ...full, result: null, partial: null }, listed.id);
      }
    });
  });
}
