// deploy/: what can be checked without a container engine. The PostgreSQL
// init script run against Debian's PostgreSQL (the service then migrates and
// works as a role that is no superuser), and the compose file's exposure.
// The image itself is checked by scripts/check-image.sh in CI.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, TempPostgres } from '../../fixtures';
import { openDatabase } from '../../src/store/open-database';
import { ApiKeyStore } from '../../src/store/api-keys';
import { tempDataDir } from '../helpers/server';

let pg: TempPostgres | undefined;
after(async () => pg?.destroy());

test('deploy/postgres-init.sh makes a role that is no superuser, owning its database; the service migrates and runs as it', async () => {
  pg = await TempPostgres.create();
  const env = { ...process.env, PGHOST: '127.0.0.1', PGPORT: String(pg.port), POSTGRES_USER: 'stt', STT_DB_USER: 'stt_app', STT_DB_NAME: 'stt_app', STT_DB_PASSWORD: 'app-password-1' };
  const run = spawnSync('sh', [path.join(ROOT, 'deploy/postgres-init.sh')], { env, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const db = await openDatabase({ dataDir: tempDataDir(), databaseUrl: `postgres://stt_app:app-password-1@127.0.0.1:${pg.port}/stt_app` });
  try {
    const keys = new ApiKeyStore(db);
    const { key } = await keys.create('works');
    assert.ok(await keys.verify(key), 'migrated, and keys are stored and read');
    const role = await db.get<{ rolsuper: boolean; rolcreatedb: boolean; rolcreaterole: boolean }>('SELECT rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = current_user');
    assert.deepEqual(role, { rolsuper: false, rolcreatedb: false, rolcreaterole: false });
  } finally {
    await db.close();
  }
  const again = spawnSync('sh', [path.join(ROOT, 'deploy/postgres-init.sh')], { env: { ...env, STT_DB_PASSWORD: '' }, encoding: 'utf8' });
  assert.notEqual(again.status, 0, 'no password, no role');
});

test('compose: the service connects as its own role, nginx listens on loopback only, no wildcard Host, a .dockerignore keeps local state out', () => {
  const compose = readFileSync(path.join(ROOT, 'deploy/compose.yaml'), 'utf8');
  assert.match(compose, /STT_DATABASE_URL: postgres:\/\/stt:\$\{STT_DB_PASSWORD/);
  assert.doesNotMatch(compose, /POSTGRES_USER: stt/, 'the superuser is not the service');
  // Any replica may run any job: the spool is one volume every replica mounts where STT_SPOOL_DIR points.
  assert.match(compose, /STT_SPOOL_DIR: \/spool/);
  assert.equal((compose.match(/replica\d: \{[^\n]*spool:\/spool/g) ?? []).length, 3, 'each of the three replicas mounts the shared spool');
  assert.match(compose, /ports: \["127\.0\.0\.1:8080:80"\]/);
  assert.doesNotMatch(compose, /STT_ALLOWED_HOSTS: "\*"/);
  assert.match(compose, /postgres-init\.sh:\/docker-entrypoint-initdb\.d\//);
  const ignored = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n');
  for (const local of ['data', 'models', 'node_modules', '.git']) assert.ok(ignored.includes(local), local);
});
