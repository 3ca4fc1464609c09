// The real server as a child process, for what only a process shows: exit
// codes, signals, libuv's pool size.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { tempDataDir, installStandInModels } from './server';
import { ROOT } from '../../fixtures';
import { openDatabase } from '../../src/store/open-database';
import type { Database } from '../../src/store/db';
import { SettingsStore } from '../../src/store/settings';
import { ApiKeyStore } from '../../src/store/api-keys';

/** A data dir with the tiny model active as whisper-base and one API key. */
export async function prepare(): Promise<{ dataDir: string; key: string }> {
  const dataDir = tempDataDir();
  await installStandInModels(dataDir, 'tiny-f16');
  const db = await openDatabase({ dataDir, databaseUrl: null });
  await new SettingsStore(db).setRouting({ mode: 'local', localModel: 'whisper-base', cloud: null });
  const { key } = await new ApiKeyStore(db).create('pool');
  await db.close();
  return { dataDir, key };
}

/** Children not yet exited: killed when the test file's process exits, so a failed test leaves no server running. */
const alive = new Set<ReturnType<typeof spawn>>();
process.on('exit', () => {
  for (const child of alive) child.kill('SIGKILL');
});

/** The server in its own process (src/server.ts's main), UV_THREADPOOL_SIZE not inherited. */
export function startChild(env: Record<string, string>) {
  const { UV_THREADPOOL_SIZE: _drop, ...inherited } = process.env;
  void _drop;
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/server.ts')], {
    cwd: ROOT,
    // Random weights decode to the token cap: greedy keeps that work bounded, as in test/helpers/server.ts.
    env: { ...inherited, PORT: '0', STT_ADMIN_KEY: 'test-admin-key-0123456789', STT_MAX_TOKENS: '16', STT_TEMPERATURE_FALLBACK: 'false', STT_BEAM_SIZE: '1', STT_DEFAULT_MODEL: 'none', STT_OPENAI_MODEL_NAMES: '', ...env },
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  alive.add(child);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => (alive.delete(child), resolve(code))));
  return { child, exited, output: () => out };
}


/** The port from the 'listening' line, once the output also matches `until` (by default: the local runtime is ready). */
export async function waitForPort(c: ReturnType<typeof startChild>, until = /local runtime ready/): Promise<number> {
  let port = 0;
  for (let i = 0; i < 1500 && !(port && until.test(c.output())); i++) {
    port = Number(/"port":(\d+)/.exec(c.output())?.[1] ?? 0);
    await new Promise((r) => setTimeout(r, 20));
  }
  if (!(port && until.test(c.output()))) c.child.kill('SIGKILL'); // it never came up: not left running
  assert.ok(port && until.test(c.output()), c.output());
  return port;
}
