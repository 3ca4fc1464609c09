// The stores on both backends, a real SQLite file and a real PostgreSQL
// server (started in a temporary directory): API keys (only a hash kept,
// lookup by prefix, revocation, last use), settings (service id, routing) and
// the secret box that seals provider keys. What only one backend does (the
// SQLite file's bytes, the shared cache and notifications) is tested on it.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openDatabase } from '../../src/store/open-database';
import { SCHEMA_VERSION } from '../../src/store/postgres-db';
import { StoreBusyError, StoreUnavailableError, type Database } from '../../src/store/db';
import { ApiKeyStore, KEY_PREFIX } from '../../src/store/api-keys';
import { DEFAULT_ROUTING, SettingsStore } from '../../src/store/settings';
import { SecretBox } from '../../src/store/secret-box';
import { TempPostgres } from '../../fixtures/postgres';
import { OUTAGE_GRACE_MS } from '../../src/store/shared-cache';
import { KeyUsageStore } from '../../src/store/key-usage';
import { SharedRequestWindows } from '../../src/store/request-windows';
import { ProviderStore } from '../../src/store/providers';
import { ReplicaStore } from '../../src/store/replicas';

// Its own, not the server helper's: that one loads the native addon, which a unit test of the stores needs not.
const tempDataDir = () => mkdtempSync(path.join(os.tmpdir(), 'stt-test-'));

type Backend = 'sqlite' | 'postgres';
const BACKENDS: Backend[] = ['sqlite', 'postgres'];
let postgres: Promise<TempPostgres> | null = null;
after(async () => (await postgres)?.destroy());

/** A fresh database of the backend: a new SQLite file, or a new database on the one test server. */
async function withDb<T>(fn: (db: Database, dir: string) => Promise<T>, backend: Backend = 'sqlite'): Promise<T> {
  const dir = tempDataDir();
  const databaseUrl = backend === 'postgres' ? await (await (postgres ??= TempPostgres.create())).newDatabase() : null;
  const db = await openDatabase({ dataDir: dir, databaseUrl });
  try {
    return await fn(db, dir);
  } finally {
    await db.close();
  }
}

test('API keys: created with a visible prefix, stored as a SHA-256 only, found by the whole key and nothing less', () =>
  withDb(async (db, dir) => {
    const keys = new ApiKeyStore(db);
    const a = await keys.create('alpha');
    assert.match(a.key, /^sk-stt-[A-Za-z0-9_-]{43}$/);
    assert.equal(a.prefix, a.key.slice(0, KEY_PREFIX.length + 8));
    assert.deepEqual({ name: a.name, lastUsedAt: a.lastUsedAt, revokedAt: a.revokedAt }, { name: 'alpha', lastUsedAt: null, revokedAt: null });
    const row = await db.get<{ hash: string }>('SELECT hash FROM api_keys WHERE id = ?', [a.id]);
    assert.equal(row!.hash, createHash('sha256').update(a.key).digest('hex'));
    const secretPart = a.key.slice(KEY_PREFIX.length + 8);
    for (const file of ['stt-gateway.sqlite', 'stt-gateway.sqlite-wal']) {
      const bytes = readFileSync(path.join(dir, file));
      assert.ok(!bytes.includes(secretPart), `the secret part of the key is not in ${file}`);
    }
  }));

for (const backend of BACKENDS) {
  test(`API keys: verify takes the exact key; a changed, short, long, foreign-prefix or revoked key is refused (${backend})`, () =>
    withDb(async (db) => {
      const keys = new ApiKeyStore(db);
      const a = await keys.create('a');
      const b = await keys.create('b');
      assert.equal((await keys.verify(a.key))?.id, a.id);
      assert.equal((await keys.verify(b.key))?.id, b.id);
      const flipped = a.key.slice(0, -1) + (a.key.endsWith('A') ? 'B' : 'A');
      for (const bad of [flipped, a.key.slice(0, KEY_PREFIX.length + 15), a.key + 'x'.repeat(200), 'sk-xyz-' + a.key.slice(7), '', a.prefix]) {
        assert.equal(await keys.verify(bad), null, JSON.stringify(bad.slice(0, 40)));
      }
      const revoked = await keys.revoke(a.id);
      assert.ok(revoked?.revokedAt);
      assert.equal(await keys.verify(a.key), null, 'revoked');
      assert.equal((await keys.verify(b.key))?.id, b.id, 'the other key still works');
      const again = await keys.revoke(a.id);
      assert.equal(again?.revokedAt, revoked!.revokedAt, 'a second revoke keeps the first time');
      assert.equal(await keys.revoke('no-such-id'), undefined);
      assert.deepEqual((await keys.list()).map((k) => k.name), ['a', 'b']);
      assert.equal(await keys.get('no-such-id'), undefined);
    }, backend));
}

test('API keys: a key of the wrong prefix or length is refused without a database lookup', () =>
  withDb(async (db) => {
    let lookups = 0;
    const counted = new Proxy(db, {
      get: (target, prop) => (prop === 'get' ? (...args: Parameters<Database['get']>) => (lookups++, target.get(...args)) : Reflect.get(target, prop, target)),
    });
    const keys = new ApiKeyStore(counted);
    const a = await keys.create('a');
    const looksUp = async (presented: string) => {
      const before = lookups;
      assert.equal(await keys.verify(presented), null, `${presented.length} characters`);
      return lookups > before;
    };
    const minimum = KEY_PREFIX.length + 16; // the 15-character lookup prefix and 8 more
    assert.equal(await looksUp(a.key.slice(0, minimum - 1)), false, 'one short of the minimum');
    assert.equal(await looksUp(a.key.slice(0, minimum)), true, 'the minimum length is looked up');
    assert.equal(await looksUp(a.key.padEnd(200, 'x')), true, '200 characters are looked up');
    assert.equal(await looksUp(a.key.padEnd(201, 'x')), false, 'over 200');
    assert.equal(await looksUp('sk-xyz-' + a.key.slice(7)), false, 'another prefix');
    assert.equal((await keys.verify(a.key))?.id, a.id);
  }));

for (const backend of BACKENDS) {
  test(`API keys: the first use is recorded, later ones within 10 s are not written again (${backend})`, () =>
    withDb(async (db) => {
      const keys = new ApiKeyStore(db, (err) => assert.fail(err));
      const a = await keys.create('a');
      const before = Date.now();
      await keys.verify(a.key);
      let used: string | null = null;
      for (let i = 0; i < 200 && !used; i++) {
        used = (await keys.get(a.id))!.lastUsedAt;
        if (!used) await new Promise((r) => setTimeout(r, 10));
      }
      assert.ok(used && Date.parse(used) >= before - 1000, `lastUsedAt ${used}`);
      await db.run('UPDATE api_keys SET last_used_at = ? WHERE id = ?', ['2000-01-01T00:00:00.000Z', a.id]);
      await keys.verify(a.key);
      await new Promise((r) => setTimeout(r, 50));
      assert.equal((await keys.get(a.id))!.lastUsedAt, '2000-01-01T00:00:00.000Z', 'not written again within the resolution');
    }, backend));
}

for (const backend of BACKENDS) {
  test(`API keys: last use is written again once 10 s have passed since the last write (${backend})`, () =>
    withDb(async (db) => {
      const realNow = Date.now;
      const start = realNow();
      let now = start;
      Date.now = () => now;
      try {
        const keys = new ApiKeyStore(db, (err) => assert.fail(err));
        const a = await keys.create('a');
        const lastUsed = async (expected: string | null) => {
          let got: string | null = null;
          for (let i = 0; i < 100; i++) {
            got = (await keys.get(a.id))!.lastUsedAt;
            if (got === expected) break;
            await new Promise((r) => setTimeout(r, 5));
          }
          return got;
        };
        await keys.verify(a.key);
        assert.equal(await lastUsed(new Date(start).toISOString()), new Date(start).toISOString());
        now = start + 9_999;
        await keys.verify(a.key);
        await new Promise((r) => setTimeout(r, 30));
        assert.equal((await keys.get(a.id))!.lastUsedAt, new Date(start).toISOString(), 'within 10 s: not written');
        now = start + 10_000;
        await keys.verify(a.key);
        assert.equal(await lastUsed(new Date(now).toISOString()), new Date(now).toISOString(), '10 s later: written');
      } finally {
        Date.now = realNow;
      }
    }, backend));
}

for (const backend of BACKENDS) {
  test(`settings: the service id is created once and kept; routing defaults until stored (${backend})`, () =>
    withDb(async (db) => {
      const settings = new SettingsStore(db);
      const id = await settings.serviceId();
      assert.match(id, /^[0-9a-f-]{36}$/);
      assert.equal(await settings.serviceId(), id);
      assert.equal(await new SettingsStore(db).serviceId(), id);
      assert.deepEqual(DEFAULT_ROUTING, { mode: 'local', localModel: null, cloud: null, aliases: [], spillover: null });
      assert.deepEqual(await settings.routing(), { mode: 'local', localModel: null, cloud: null, aliases: [], spillover: null });
      assert.equal(await settings.hasRouting(), false);
      const routing = { mode: 'cloud' as const, localModel: 'whisper-base', cloud: { providerId: 'openai', model: 'whisper-1' } };
      await settings.setRouting(routing);
      assert.deepEqual(await settings.routing(), { ...routing, aliases: [], spillover: null }, 'routing stored without aliases or spill-over has none');
      await settings.setRouting({ ...routing, aliases: ['whisper-1'] });
      assert.deepEqual((await settings.routing()).aliases, ['whisper-1']);
      assert.equal(await settings.hasRouting(), true);
      await settings.setRouting({ ...routing, mode: 'local' });
      assert.equal((await settings.routing()).mode, 'local', 'stored again over the first');
    }, backend));
}

for (const backend of BACKENDS) {
  test(`settings: first calls racing for the service id all get the one stored (${backend})`, () =>
    withDb(async (db) => {
      const ids = await Promise.all([1, 2, 3, 4].map(() => new SettingsStore(db).serviceId()));
      assert.equal(new Set(ids).size, 1, ids.join(' '));
      assert.equal(await new SettingsStore(db).serviceId(), ids[0]);
    }, backend));
}

/** A key sealed as SecretBox sealed them before 2026-12-03 (v1: AES-256-GCM, no associated data). */
function legacySeal(keyHex: string, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(keyHex, 'hex'), iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return `v1:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
}

test('secret box: seals with a fresh IV each time, opens only what it sealed, refuses tampering and other keys', () => {
  const dir = tempDataDir();
  const box = SecretBox.open(dir, null);
  const file = path.join(dir, 'secret.key');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.match(readFileSync(file, 'utf8').trim(), /^[0-9a-f]{64}$/);
  const sealed = box.seal('sk-provider-secret');
  assert.match(sealed, /^v2:[A-Za-z0-9+/=]+$/);
  assert.notEqual(box.seal('sk-provider-secret'), sealed, 'a fresh IV per seal');
  assert.ok(!sealed.includes('sk-provider-secret') && !Buffer.from(sealed.slice(3), 'base64').includes('sk-provider-secret'));
  assert.equal(box.open(sealed), 'sk-provider-secret');
  assert.equal(SecretBox.open(dir, null).open(sealed), 'sk-provider-secret', 'the same file opens it after a restart');

  const raw = Buffer.from(sealed.slice(3), 'base64');
  raw[raw.length - 1] ^= 1;
  assert.throws(() => box.open(`v2:${raw.toString('base64')}`), 'a changed byte fails authentication');
  assert.throws(() => box.open(sealed.replace('v2:', 'v3:')), /unknown secret format/);
  assert.throws(() => box.open('v2'), /unknown secret format/);

  // Sealed for an owner: opens for that owner only.
  const owned = box.seal('sk-provider-secret', 'provider a');
  assert.equal(box.open(owned, 'provider a'), 'sk-provider-secret');
  assert.throws(() => box.open(owned, 'provider b'), 'another owner does not open it');
  assert.throws(() => box.open(owned), 'nor no owner');
  assert.throws(() => box.open(sealed, 'provider a'), 'nor does an owner open what was sealed for none');
  // v1 (no owner): only openLegacy opens it, and openLegacy opens nothing else.
  const v1 = legacySeal('ab'.repeat(32), 'sk-old');
  const fromHex = SecretBox.open(tempDataDir(), 'ab'.repeat(32));
  assert.equal(fromHex.isLegacy(v1), true);
  assert.equal(fromHex.openLegacy(v1), 'sk-old');
  assert.throws(() => fromHex.open(v1), /unknown secret format/);
  assert.throws(() => fromHex.openLegacy(fromHex.seal('x')), /unknown secret format/);
  assert.throws(() => SecretBox.open(tempDataDir(), null).open(sealed), 'another data dir has another key');

  const env = 'ab'.repeat(32);
  const fromEnv = SecretBox.open(tempDataDir(), env);
  assert.equal(SecretBox.open(tempDataDir(), env).open(fromEnv.seal('x')), 'x', 'STT_SECRET_KEY opens what it sealed anywhere');
  assert.throws(() => box.open(fromEnv.seal('x')));

  writeFileSync(file, 'not hex');
  assert.throws(() => SecretBox.open(dir, null), /secret\.key is not 64 hex characters/);
  assert.equal(readFileSync(file, 'utf8'), 'not hex', 'a damaged key file is never replaced');
  const hex = 'ab'.repeat(32);
  for (const damaged of ['x' + hex, hex + 'x', hex + 'a', 'a' + hex, hex.slice(1)]) {
    writeFileSync(file, damaged);
    assert.throws(() => SecretBox.open(dir, null), /is not 64 hex characters/, damaged);
  }
  writeFileSync(file, ` ${hex.toUpperCase()}\n`);
  assert.equal(SecretBox.open(dir, null).open(fromEnv.seal('x')), 'x', 'surrounding whitespace and upper case are fine');
});

for (const backend of BACKENDS) {
  test(`provider keys: bound to their row and base URL; a key moved to another row or a base URL changed outside the store no longer opens; the store's own move drops it (${backend})`, () =>
    withDb(async (db) => {
      const box = SecretBox.open(tempDataDir(), 'cd'.repeat(32));
      const providers = new ProviderStore(db, box);
      await providers.seedBuiltIns();
      const stored = async (id: string) => (await db.get<{ api_key_enc: string; base_url: string }>('SELECT api_key_enc, base_url FROM providers WHERE id = ?', [id]))!;
      await providers.upsert('openai', await providers.get('openai'), { apiKey: 'sk-openai-0123456789' });
      assert.equal(await providers.apiKey('openai'), 'sk-openai-0123456789');

      // Written behind the store (someone with the database but not the secret): the key does not open.
      const { api_key_enc: sealed, base_url: url } = await stored('openai');
      await db.run('UPDATE providers SET base_url = ? WHERE id = ?', ['https://collector.example/v1', 'openai']);
      await assert.rejects(fresh(db, box).apiKey('openai'), { name: 'UndecryptableKeyError' });
      await db.run('UPDATE providers SET base_url = ? WHERE id = ?', [url, 'openai']);
      await db.run('UPDATE providers SET api_key_enc = ? WHERE id = ?', [sealed, 'groq']);
      await assert.rejects(fresh(db, box).apiKey('groq'), { name: 'UndecryptableKeyError' });
      assert.equal(await fresh(db, box).apiKey('openai'), 'sk-openai-0123456789');

      // Through the store: a new base URL without a new key drops the stored key (given for another destination).
      const moved = await providers.upsert('openai', await providers.get('openai'), { baseUrl: 'https://proxy.example/v1' });
      assert.deepEqual([moved.apiKeySet, moved.apiKeyHint], [false, null]);
      assert.equal(await providers.apiKey('openai'), null);
      // With a new key: sealed for the new URL; record and key come from one read.
      await providers.upsert('openai', await providers.get('openai'), { apiKey: 'sk-openai-9876543210' });
      const both = await fresh(db, box).withKey('openai');
      assert.deepEqual([both?.record.baseUrl, both?.apiKey], ['https://proxy.example/v1', 'sk-openai-9876543210']);
    }, backend));

  test(`provider keys: v1 keys are sealed again for their rows once, at the first start that binds keys; a v1 key written after is refused (${backend})`, () =>
    withDb(async (db) => {
      const hex = 'ef'.repeat(32);
      const box = SecretBox.open(tempDataDir(), hex);
      const settings = new SettingsStore(db);
      const providers = new ProviderStore(db, box);
      await providers.seedBuiltIns();
      await db.run('UPDATE providers SET api_key_enc = ?, api_key_hint = ? WHERE id = ?', [legacySeal(hex, 'sk-old-openai'), '…enai', 'openai']);
      await db.run('UPDATE providers SET api_key_enc = ? WHERE id = ?', [legacySeal('12'.repeat(32), 'sk-other-secret'), 'groq']);
      await assert.rejects(providers.apiKey('openai'), { name: 'UndecryptableKeyError' }, 'a v1 key is not opened as it is');

      assert.equal(await providers.bindLegacyKeys(settings), 1, 'the one the secret opens');
      assert.equal(await providers.apiKey('openai'), 'sk-old-openai');
      assert.match((await db.get<{ api_key_enc: string }>('SELECT api_key_enc FROM providers WHERE id = ?', ['openai']))!.api_key_enc, /^v2:/);
      await assert.rejects(providers.apiKey('groq'), { name: 'UndecryptableKeyError' }, 'sealed under another secret: refused as before');
      assert.equal(await settings.providerKeysBoundAt(), undefined, 'not recorded while a v1 key is left: the right secret may come back');
      // The right secret back (a restored secret.key): that key is bound too, and it is recorded.
      assert.equal(await new ProviderStore(db, SecretBox.open(tempDataDir(), '12'.repeat(32))).bindLegacyKeys(settings), 1);
      assert.equal(await fresh(db, SecretBox.open(tempDataDir(), '12'.repeat(32))).apiKey('groq'), 'sk-other-secret');
      assert.ok(await settings.providerKeysBoundAt());

      // After: a v1 value written into a row (an old backup's, with the row pointed elsewhere) is not bound to it.
      await db.run('UPDATE providers SET api_key_enc = ?, base_url = ? WHERE id = ?', [legacySeal(hex, 'sk-old-openai'), 'https://collector.example/v1', 'deepgram']);
      assert.equal(await providers.bindLegacyKeys(settings), 0);
      await assert.rejects(fresh(db, box).apiKey('deepgram'), { name: 'UndecryptableKeyError' });
    }, backend));
}

/** A store with no cached rows, as another replica or a restart reads the database. */
const fresh = (db: Database, box: SecretBox) => new ProviderStore(db, box);

test('secret box: a secret.key that cannot be read stops start-up naming the file, and is not replaced', () => {
  const dir = tempDataDir();
  const file = path.join(dir, 'secret.key');
  mkdirSync(file); // EISDIR on read: any error but "no such file"
  assert.throws(() => SecretBox.open(dir, null), (e: unknown) => e instanceof Error && e.message.startsWith(`${file} cannot be read (EISDIR`) && /stored provider keys need it$/.test(e.message));
  assert.ok(statSync(file).isDirectory());
});

/** Resolves after `count` notifications of `topic` have reached `db` (each change sends one, its writer's own included). */
function notifications(db: Database, count: number, topic = 'api_keys'): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    db.onChange((t) => {
      if (t === topic && ++seen === count) resolve();
    });
  });
}

test('shared database: a key another replica revoked leaves this one\'s cache when the notification arrives; a cached key costs no query', async () => {
  const url = await (await (postgres ??= TempPostgres.create())).newDatabase();
  const [dbA, dbB] = await Promise.all([1, 2].map(() => openDatabase({ dataDir: tempDataDir(), databaseUrl: url })));
  try {
    let lookups = 0;
    const counted = new Proxy(dbB, {
      get: (target, prop) => (prop === 'get' ? (...args: Parameters<Database['get']>) => (lookups++, target.get(...args)) : Reflect.get(target, prop, target)),
    });
    const a = new ApiKeyStore(dbA);
    const b = new ApiKeyStore(counted);
    const created = notifications(dbB, 1);
    const k = await a.create('roaming');
    await created; // else it may empty B's cache between the two verifies below
    assert.equal((await b.verify(k.key))?.id, k.id, 'created by A, found by B at once');
    const before = lookups;
    assert.equal((await b.verify(k.key))?.id, k.id);
    assert.equal(lookups, before, 'the second verify is answered from the cache');
    await a.revoke(k.id);
    let refusedAfter = -1;
    for (let i = 0; i < 1000 && refusedAfter < 0; i++) {
      if ((await b.verify(k.key)) === null) refusedAfter = i;
      else await new Promise((r) => setTimeout(r, 10));
    }
    assert.ok(refusedAfter >= 0, 'refused once the notification arrived');
  } finally {
    await Promise.all([dbA.close(), dbB.close()]);
  }
});

test('a revocation made while a replica\'s notifications were cut is not served from its cache once they are back (resync empties it)', async () => {
  await twoReplicas(async (dbA, dbB) => {
    const a = new ApiKeyStore(dbA);
    const b = new ApiKeyStore(dbB);
    const created = notifications(dbB, 1);
    const k = await a.create('cut-off');
    await created;
    assert.equal((await b.verify(k.key))?.id, k.id, 'B has it cached');
    // Every other connection to the database is cut, B's listening one among them (its last query may be a
    // ping, so it is not picked out by its text); the revocation's notification reaches no one listening.
    await dbA.run('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    for (let i = 0; i < 500 && dbB.listening; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(dbB.listening, false, 'B noticed');
    // A's own pooled connections were cut too: its first tries may meet one before the pool drops it.
    for (let tries = 0; ; tries++) {
      try {
        await a.revoke(k.id);
        break;
      } catch (err) {
        if (!(err instanceof StoreUnavailableError) || tries > 50) throw err;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    for (let i = 0; i < 1000 && !dbB.listening; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(dbB.listening, true, 'B listens again');
    assert.equal(await b.verify(k.key), null, 'the key read before the gap is not trusted after it');
  });
});

test('shared database down: a known key still verifies, an unseen key and every write get StoreUnavailableError; all resumes when it is back', async () => {
  const server = await TempPostgres.create(); // its own: stopped in the middle
  const db = await openDatabase({ dataDir: tempDataDir(), databaseUrl: await server.newDatabase() });
  try {
    const keys = new ApiKeyStore(db);
    const created = notifications(db, 2);
    const known = await keys.create('known');
    const unseen = await keys.create('unseen');
    await created; // its own notifications empty its cache too
    assert.equal((await keys.verify(known.key))?.id, known.id);
    await server.stop();
    for (let i = 0; i < 500 && db.listening; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(db.listening, false, 'the notification connection noticed');
    assert.equal((await keys.verify(known.key))?.id, known.id, 'known: served from the cache');
    await assert.rejects(keys.verify(unseen.key), StoreUnavailableError);
    await assert.rejects(keys.create('during'), StoreUnavailableError);
    await assert.rejects(new SettingsStore(db).setRouting({ mode: 'local', localModel: null, cloud: null }), StoreUnavailableError);
    const realNow = Date.now;
    const readAt = realNow();
    try {
      Date.now = () => readAt + OUTAGE_GRACE_MS - 1000;
      assert.equal((await keys.verify(known.key))?.id, known.id, 'still within the grace');
      Date.now = () => readAt + OUTAGE_GRACE_MS + 1000;
      await assert.rejects(keys.verify(known.key), StoreUnavailableError, 'past the grace: not served from memory');
    } finally {
      Date.now = realNow;
    }
    await server.start();
    for (let i = 0; i < 500 && !db.listening; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(db.listening, true, 'notifications flow again');
    assert.equal((await keys.verify(unseen.key))?.id, unseen.id);
    assert.ok((await keys.create('after')).key);
  } finally {
    await db.close();
    await server.destroy();
  }
});

test('STT_STORE_GRACE_S=0: with the shared database down, even a key just read is refused (store_unavailable), none served from memory', async () => {
  const server = await TempPostgres.create(); // its own: stopped in the middle
  const db = await openDatabase({ dataDir: tempDataDir(), databaseUrl: await server.newDatabase(), storeGraceSeconds: 0 });
  try {
    const keys = new ApiKeyStore(db);
    const created = notifications(db, 1);
    const known = await keys.create('known');
    await created;
    assert.equal((await keys.verify(known.key))?.id, known.id);
    await server.stop();
    for (let i = 0; i < 500 && db.listening; i++) await new Promise((r) => setTimeout(r, 10));
    await assert.rejects(keys.verify(known.key), StoreUnavailableError);
    await server.start();
    for (let i = 0; i < 500 && !db.listening; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal((await keys.verify(known.key))?.id, known.id, 'served again once it is back');
  } finally {
    await db.close();
    await server.destroy();
  }
});

test('shared database up with no connection to spare (53300, or the pool full past its checkout timeout): busy, not an outage; nothing counted from memory', async () => {
  const server = await (postgres ??= TempPostgres.create());
  // A role held to 2 connections (CONNECTION LIMIT binds no superuser), owning its database so it can migrate it:
  // the pool's first connection and the notification one use them up, so a third is refused with 53300.
  const role = `stt_limited_${process.pid}`;
  const admin = new pg.Client(server.url());
  await admin.connect();
  try {
    await admin.query(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT 2`);
    await admin.query(`CREATE DATABASE ${role} OWNER ${role}`);
  } finally {
    await admin.end();
  }
  const busy = (e: unknown) => e instanceof StoreBusyError && e.code === 'store_busy';
  const now = Date.UTC(2026, 10, 24, 12, 0, 10);
  const limited = await openDatabase({ dataDir: tempDataDir(), databaseUrl: `postgres://${role}@127.0.0.1:${server.port}/${role}` });
  try {
    const held = limited.run('SELECT pg_sleep(2)'); // the pool's one connection, in use
    await new Promise((r) => setTimeout(r, 200));
    // Counted from memory, this first request of the minute would be admitted whatever the shared count says.
    await assert.rejects(new SharedRequestWindows(limited).count('k', 1, now), busy, '53300: busy');
    await assert.rejects(new KeyUsageStore(limited).audioSeconds('k', '2026-11-24'), busy, 'no remembered budget either');
    assert.equal(limited.unreachable, false, 'no outage mode');
    await held;
    assert.equal((await new SharedRequestWindows(limited).count('k', 1, now)).admitted, true, 'counted once a connection is free');
  } finally {
    await limited.close();
  }
  // All 10 of the pool's connections in use past its 3-s checkout timeout: pg-pool gives up without asking the server.
  await withDb(async (db) => {
    const held = Array.from({ length: 10 }, () => db.run('SELECT pg_sleep(4)'));
    await assert.rejects(new SharedRequestWindows(db).count('k', 1, now), (e) => busy(e) && /timeout exceeded when trying to connect/.test((e as StoreBusyError).detail));
    assert.equal(db.unreachable, false, 'no outage mode');
    await Promise.all(held);
  }, 'postgres');
});

/** Two handles on one fresh shared database, as two replicas have. */
async function twoReplicas<T>(fn: (a: Database, b: Database) => Promise<T>): Promise<T> {
  const url = await (await (postgres ??= TempPostgres.create())).newDatabase();
  const [a, b] = await Promise.all([1, 2].map(() => openDatabase({ dataDir: tempDataDir(), databaseUrl: url })));
  try {
    return await fn(a, b);
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}

test('shared database: five processes opening an empty database at once all come up, the migrations applied once', async () => {
  const url = await (await (postgres ??= TempPostgres.create())).newDatabase();
  const dbs = await Promise.all([1, 2, 3, 4, 5].map(() => openDatabase({ dataDir: tempDataDir(), databaseUrl: url })));
  try {
    assert.deepEqual(await dbs[0].all('SELECT version FROM schema_version'), [{ version: SCHEMA_VERSION }]);
    assert.equal(new Set(await Promise.all(dbs.map((db) => new SettingsStore(db).serviceId()))).size, 1, 'one service id');
  } finally {
    await Promise.all(dbs.map((db) => db.close()));
  }
});

test('shared database: usage, request windows, providers and replica rows are one across replicas', () =>
  twoReplicas(async (a, b) => {
    const day = '2026-11-24';
    const usageA = new KeyUsageStore(a);
    const usageB = new KeyUsageStore(b);
    assert.equal(await usageB.audioSeconds('k', day), 0);
    usageA.record('k', day, { audioSeconds: 3, error: false });
    usageB.record('k', day, { audioSeconds: 2, error: true });
    let usage = await usageA.onDay(day);
    for (let i = 0; i < 100 && usage.get('k')?.requests !== 2; i++) usage = await usageA.onDay(day);
    assert.deepEqual(usage.get('k'), { day, requests: 2, audioSeconds: 5, errors: 1 }, 'both replicas counted, atomically');
    assert.equal(await usageB.audioSeconds('k', day), 5, 'the budget reads what every replica counted');

    const windowsA = new SharedRequestWindows(a);
    const windowsB = new SharedRequestWindows(b);
    const now = Date.UTC(2026, 10, 24, 12, 0, 10);
    const counts = [await windowsA.count('k', 3, now), await windowsB.count('k', 3, now), await windowsA.count('k', 3, now), await windowsB.count('k', 3, now)];
    assert.deepEqual(counts.map((c) => [c.admitted, c.count]), [[true, 1], [true, 2], [true, 3], [false, 3]]);
    assert.equal(counts[3].resetMs, 50_000, 'the clock minute');
    assert.deepEqual((await windowsB.count('k', 3, now + 50_000)).count, 1, 'the next minute starts again');

    const box = SecretBox.open(tempDataDir(), 'ab'.repeat(32));
    const providersA = new ProviderStore(a, box);
    const providersB = new ProviderStore(b, box);
    await providersA.seedBuiltIns();
    assert.equal((await providersB.get('openai'))?.enabled, false);
    const changed = notifications(b, 1, 'providers');
    await providersA.upsert('openai', await providersA.get('openai'), { enabled: true, apiKey: 'sk-shared' });
    await changed;
    assert.equal((await providersB.get('openai'))?.enabled, true, 'B\'s cached row left when A changed it');
    assert.equal(await providersB.apiKey('openai'), 'sk-shared', 'sealed by A, opened by B with the same secret');

    const replicasA = new ReplicaStore(a);
    const beat = { address: '127.0.0.1:1', version: '1', startedAt: new Date().toISOString(), runtime: 'whisper-base', state: 'ready' as const, queueDepth: 2 };
    await replicasA.beat({ id: 'r1', ...beat });
    await new ReplicaStore(b).beat({ id: 'r2', ...beat, queueDepth: 0 });
    const live = await replicasA.live('r1');
    assert.deepEqual(live.map((r) => [r.id, r.self, r.queueDepth]), [['r1', true, 2], ['r2', false, 0]]);
    await replicasA.leave('r1');
    assert.deepEqual((await replicasA.live('r1')).map((r) => r.id), ['r2']);
  }));
