// The job spool's room check (src/jobs/spool-space.ts): every upload still
// arriving counts at the upload limit, and the floor is kept beyond them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freeBytes, spoolHasRoom } from '../../src/jobs/spool-space';

const MiB = 1024 * 1024;

test('an upload has room only if the uploads arriving, at the limit each, leave the floor free', () => {
  // 2 GiB free, 512-MiB uploads, a 1-GiB floor: two arriving fit (1 GiB + the floor), three do not.
  assert.equal(spoolHasRoom(2048 * MiB, 2, 512 * MiB, 1024 * MiB), true);
  assert.equal(spoolHasRoom(2048 * MiB, 3, 512 * MiB, 1024 * MiB), false);
  assert.equal(spoolHasRoom(1536 * MiB, 1, 512 * MiB, 1024 * MiB), true, 'exactly the floor left is enough');
  assert.equal(spoolHasRoom(1536 * MiB - 1, 1, 512 * MiB, 1024 * MiB), false);
  assert.equal(spoolHasRoom(0, 1, 1024, 0), false, 'a full disk takes no upload even with no floor');
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
