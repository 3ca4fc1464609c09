// The daily audio budget under concurrency, on a real SQLite usage store:
// requests that start together share the store's first read of the key's
// count, and each must still see the seconds the ones before it reserved.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/store/open-database';
import { KeyUsageStore } from '../../src/store/key-usage';
import { MemoryRequestWindows } from '../../src/store/request-windows';
import { KeyLimiter } from '../../src/http/key-limiter';
import { ApiError } from '../../src/http/api-error';
import type { ApiKeyRecord } from '../../src/store/api-keys';

const key = (audioSecondsPerDay: number | null): ApiKeyRecord => ({
  id: 'key-1', name: 'k', prefix: 'sk-stt-abc', createdAt: '2026-11-27T00:00:00Z', lastUsedAt: null, revokedAt: null,
  requestsPerMinute: null, audioSecondsPerDay, localOnly: false,
});

test('three 11-s turns started together against a 15-s budget: one admitted, two refused with 429', async () => {
  const db = await openDatabase({ dataDir: mkdtempSync(path.join(os.tmpdir(), 'stt-limiter-')), databaseUrl: null });
  try {
    const limiter = new KeyLimiter(new KeyUsageStore(db), new MemoryRequestWindows());
    const outcomes = await Promise.allSettled([0, 1, 2].map(() => limiter.admitLiveTurn(key(15), 11)));
    assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1);
    for (const o of outcomes.filter((x) => x.status === 'rejected')) {
      assert.ok(o.reason instanceof ApiError && o.reason.status === 429 && o.reason.code === 'audio_budget_exceeded', String(o.reason));
    }
    // The admitted turn ends having used its 11 s: a fourth is still refused, now by what was recorded.
    (outcomes.find((o) => o.status === 'fulfilled') as PromiseFulfilledResult<{ end(s: number, e: boolean): void }>).value.end(11, false);
    await assert.rejects(limiter.admitLiveTurn(key(15), 11), (e: unknown) => e instanceof ApiError && e.status === 429);
    assert.ok(await limiter.liveSecondsFit(key(15), 4));
    assert.equal(await limiter.liveSecondsFit(key(15), 5), false);
  } finally {
    await db.close();
  }
});
