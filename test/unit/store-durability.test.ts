// What survives a crash or a damaged file: key writes are synced (WAL with
// synchronous = FULL, so a revoked key cannot come back after a power loss),
// and a damaged secret.key stops start-up instead of being replaced.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync, writeFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/store/open-database';
import type { Database } from '../../src/store/db';
import { SecretBox } from '../../src/store/secret-box';
import { resolveAdminKey } from '../../src/store/admin-key';

const dir = () => mkdtempSync(path.join(os.tmpdir(), 'stt-store-'));

test('the database syncs every commit (synchronous = FULL)', async () => {
  const db = await openDatabase({ dataDir: dir(), databaseUrl: null });
  try {
    const row = await db.get<{ synchronous: number }>('PRAGMA synchronous');
    assert.equal(row?.synchronous, 2);
    assert.equal((await db.get<{ journal_mode: string }>('PRAGMA journal_mode'))?.journal_mode, 'wal');
  } finally {
    await db.close();
  }
});

test('secret.key: created 0600 and atomically, reused, and a damaged one refuses to start naming the file', () => {
  const d = dir();
  const box = SecretBox.open(d, null);
  const file = path.join(d, 'secret.key');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.deepEqual(readdirSync(d), ['secret.key'], 'no temporary file left');
  const sealed = box.seal('provider-key');
  assert.equal(SecretBox.open(d, null).open(sealed), 'provider-key', 'the same key next start');
  const before = readFileSync(file, 'utf8');
  writeFileSync(file, 'garbage\n');
  assert.throws(() => SecretBox.open(d, null), new RegExp(`${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is not 64 hex characters`));
  assert.equal(readFileSync(file, 'utf8'), 'garbage\n', 'not replaced');
  writeFileSync(file, before);
});

test('admin.key: generated once 0600, reused, and an empty one refuses to start instead of being replaced', () => {
  const d = dir();
  const first = resolveAdminKey(d, null);
  assert.equal(first.generated, true);
  assert.equal(statSync(first.file!).mode & 0o777, 0o600);
  assert.deepEqual(resolveAdminKey(d, null), { ...first, generated: false });
  writeFileSync(first.file!, '\n');
  assert.throws(() => resolveAdminKey(d, null), /holds no usable admin key/);
  assert.equal(readFileSync(first.file!, 'utf8'), '\n');
});
