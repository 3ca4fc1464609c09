// The job spool's room check (src/jobs/spool-space.ts): every upload still
// arriving counts at the most it can write, and the floor is kept beyond them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freeBytes, spoolHasRoom, uploadBound } from '../../src/jobs/spool-space';

const MiB = 1024 * 1024;

test('an upload has room only if it and the bytes reserved for those arriving leave the floor free', () => {
  // 2 GiB free, a 1-GiB floor: 512 MiB reserved and a 512-MiB upload fit, 513 MiB reserved do not.
  assert.equal(spoolHasRoom(2048 * MiB, 512 * MiB, 512 * MiB, 1024 * MiB), true, 'exactly the floor left is enough');
  assert.equal(spoolHasRoom(2048 * MiB, 513 * MiB, 512 * MiB, 1024 * MiB), false);
  assert.equal(spoolHasRoom(2048 * MiB, 0, 1024 * MiB + 1, 1024 * MiB), false);
  assert.equal(spoolHasRoom(0, 0, 1, 0), false, 'a full disk takes no upload even with no floor');
});

test('an upload reserves its Content-Length, at most the limit; a chunked one or one without a length the limit', () => {
  assert.equal(uploadBound(350_000, false, 512 * MiB), 350_000);
  assert.equal(uploadBound(600 * MiB, false, 512 * MiB), 512 * MiB);
  assert.equal(uploadBound(undefined, false, 512 * MiB), 512 * MiB);
  assert.equal(uploadBound(350_000, true, 512 * MiB), 512 * MiB, 'chunked: a length beside it does not bound the body');
  assert.equal(uploadBound(Number.NaN, false, 512 * MiB), 512 * MiB);
});

test('free space is what df reports for the directory\'s disk', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'stt-spool-'));
  return freeBytes(dir).then((free) => {
    // df's available 1K-blocks for the same filesystem; both move a little as other writers run.
    const line = execFileSync('df', ['-P', '-k', dir], { encoding: 'utf8' }).trim().split('\n')[1];
    const dfFree = Number(line.split(/\s+/)[3]) * 1024;
    assert.ok(Math.abs(free - dfFree) < 64 * MiB, `statfs ${free}, df ${dfFree}`);
  });
});
