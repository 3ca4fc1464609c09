// The published OpenAPI document (GET /openapi.json) held against the live
// server by schemathesis (from PyPI, in a venv under the cache): no 5xx, no
// status, content type or body the document does not declare, no schema-valid
// request refused beyond what test/schemathesis/schemathesis.toml allows, no
// schema-violating one accepted, 405 for undeclared methods. Bounded: a fixed
// seed (STT_FUZZ_SEED varies it) and a number of examples per operation (no
// --max-time: with it schemathesis fuzzes on until the time is spent).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { pythonVenv, ROOT } from '../../fixtures';
import { startTestServer, type TestServer } from '../helpers/server';

const SCHEMATHESIS = 'schemathesis==4.32.5';
const CONFIG = path.join(ROOT, 'test', 'schemathesis', 'schemathesis.toml');
const SEED = process.env.STT_FUZZ_SEED ?? '20261124';
let server: TestServer;
let st: string;

before(async () => {
  st = path.join(pythonVenv('schemathesis', [SCHEMATHESIS]), 'st');
  // Downloads the fuzzer may start go to a closed loopback port and fail at once.
  server = await startTestServer({ routing: { mode: 'local', localModel: 'whisper-base' }, env: { STT_MODEL_BASE_URL: 'https://127.0.0.1:9/models' } });
});
after(async () => {
  await server?.close();
});

async function schemathesis(extra: string[]): Promise<void> {
  const args = ['--config-file', CONFIG, 'run', `${server.url}/openapi.json`, '--checks', 'all', '--max-examples', '30',
    '--seed', SEED, '--workers', '1', '--request-timeout', '60', '--no-color', ...extra];
  const env = { ...process.env, STT_TEST_API_KEY: server.apiKey, STT_TEST_ADMIN_KEY: server.adminKey };
  const run = await promisify(execFile)(st, args, { env, maxBuffer: 1 << 26 }).then(
    (r) => ({ code: 0, out: r.stdout + r.stderr }),
    (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: e.code ?? 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` }),
  );
  // The findings, each line cut short (a reproduction's curl can run to kilobytes), then the summary.
  const lines = run.out.split('\n');
  const findings = lines.filter((l) => /^(_{3,} |- ST\d|\[\d{3}\]|    `|    Expected)/.test(l)).map((l) => l.slice(0, 400));
  assert.equal(run.code, 0, [...findings, ...lines.slice(-25)].join('\n'));
  assert.match(run.out, /\d+ generated, \d+ passed/, 'it ran cases');
}

test('the document describes every route the server has', async () => {
  const doc = await (await fetch(`${server.url}/openapi.json`)).json();
  assert.equal(doc.openapi, '3.1.0');
  const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
    .flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`)).sort();
  const { createRouter } = await import('../../src/app');
  const served = createRouter(server.services).stack
    .filter((l) => l.methods.length > 0 && !String(l.path).startsWith('/settings'))
    // HEAD comes with GET; OPTIONS is the guard's preflight answer, not an operation.
    .flatMap((l) => l.methods.filter((m) => m !== 'HEAD' && m !== 'OPTIONS').map((m) => `${m} ${String(l.path).replace('*id', '{id}').replace(/:(\w+)/g, '{$1}')}`))
    .sort();
  assert.deepEqual(documented, served);
  // The admin bodies are the routes' own zod schemas: strict, as the routes are.
  assert.equal(doc.paths['/admin/routing'].put.requestBody.content['application/json'].schema.additionalProperties, false);
});

test('schemathesis: every operation but key revocation (which would revoke the fuzzer\'s own key) and /ready', { timeout: 600_000 }, async () => {
  await schemathesis(['--exclude-operation-id', 'revokeApiKey', '--exclude-operation-id', 'ready']);
});

test('schemathesis: /ready, whose documented 503 is its answer while no model serves', { timeout: 600_000 }, async () => {
  await schemathesis(['--include-operation-id', 'ready', '--exclude-checks', 'not_a_server_error']);
});

test('schemathesis: key revocation, last', { timeout: 600_000 }, async () => {
  await schemathesis(['--include-operation-id', 'revokeApiKey']);
  const health = await fetch(`${server.url}/health`);
  assert.equal(health.status, 200, 'the service is healthy after the fuzzing');
});
