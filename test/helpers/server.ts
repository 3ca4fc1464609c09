// Starts the real server in-process on 127.0.0.1:0 with a temp data dir and
// generated models installed under their catalogue file names.
import { mkdtempSync, mkdirSync, symlinkSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/log';
import { startServer, type RunningServer } from '../../src/server';
import { openDatabase } from '../../src/store/open-database';
import type { Database } from '../../src/store/db';
import { SettingsStore, type Routing } from '../../src/store/settings';
import { makeWhisperModel, PARAKEET_FIXTURE } from '../../fixtures';

export interface TestServer extends RunningServer {
  dataDir: string;
  adminKey: string;
  apiKey: string;
  auth: { Authorization: string };
}

export interface TestServerOptions {
  dataDir?: string;
  /** Over the test defaults below; an undefined value unsets one, so the server's own default applies. */
  env?: Record<string, string | undefined>;
  /** Which synthetic Whisper shape is installed as whisper-base (and whisper-small). */
  whisper?: 'micro-f16' | 'tiny-f16';
  /** Active runtime at start; undefined keeps what the data dir has. */
  routing?: Partial<Routing>;
  createKey?: boolean;
  /** Install the generated stand-ins under catalogue names (installStandInModels; default true). */
  installModels?: boolean;
  /** Collects the server's log records (info and up) here instead of discarding them. */
  logs?: Record<string, unknown>[];
}

export function tempDataDir(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'stt-test-'));
}

/**
 * Generated stand-ins under the catalogue's file names (the catalogue knows
 * runtimes by file name, so a test model must wear one). They are not base,
 * small or Parakeet 0.6B: whisper-base and whisper-small are both the one
 * generated Whisper model (`whisper`, random weights, base's vocabulary) and
 * parakeet-tdt-0.6b-v3 is the shared Parakeet fixture (exact 0.6B shapes,
 * random weights). Tests that need real weights use test/helpers/real-models.ts.
 */
export async function installStandInModels(dataDir: string, whisper: 'micro-f16' | 'tiny-f16' = 'micro-f16'): Promise<void> {
  const models = path.join(dataDir, 'models');
  mkdirSync(models, { recursive: true });
  const file = await makeWhisperModel(whisper);
  for (const name of ['ggml-base.bin', 'ggml-small.bin']) {
    if (!existsSync(path.join(models, name))) symlinkSync(file, path.join(models, name));
  }
  const pk = path.join(models, 'parakeet-tdt-0.6b-v3-f16.bin');
  if (!existsSync(pk)) symlinkSync(PARAKEET_FIXTURE, pk);
}

export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = opts.dataDir ?? tempDataDir();
  if (opts.installModels !== false) await installStandInModels(dataDir, opts.whisper);
  if (opts.routing) {
    const db = await openDatabase({ dataDir, databaseUrl: null });
    const settings = new SettingsStore(db);
    await settings.setRouting({ ...(await settings.routing()), ...opts.routing });
    await db.close();
  }
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    STT_DATA_DIR: dataDir,
    STT_ADMIN_KEY: 'test-admin-key-0123456789',
    STT_THREADS: '2',
    LOG_LEVEL: opts.logs ? 'info' : process.env.TEST_LOG_LEVEL ?? 'silent',
    // Random weights decode to the cap and trigger every temperature retry: bound the work.
    STT_MAX_TOKENS: '16',
    STT_TEMPERATURE_FALLBACK: 'false',
    // Greedy, as whisper-cli's reference in the parity tests (fixtures/peers.ts); beam 5
    // (the server's default) runs in the beam parity test and where a test unsets this.
    STT_BEAM_SIZE: '1',
    // No first-start activation unless a test asks for it.
    STT_DEFAULT_MODEL: 'none',
    // The host's aliases only, so that a model list is the routing's; OpenAI's names (the default)
    // are tested in aliases.test.ts and production-defaults.test.ts.
    STT_OPENAI_MODEL_NAMES: '',
    // Fake providers and the model server are plain-http loopback servers.
    STT_ALLOW_INSECURE_LOOPBACK: 'true',
    ...opts.env,
  });
  const logs = opts.logs;
  const running = await startServer(config, createLogger(config.logLevel, logs && { write: (line: string) => void logs.push(JSON.parse(line)) }));
  const { localModel } = await running.services.settings.routing();
  const st = await running.services.local.ready();
  // A test that asked for a local model and goes on without it fails later, and further from the reason.
  if (localModel && (st.state !== 'ready' || st.activeModel !== localModel)) {
    await running.close();
    throw new Error(`the routing names local runtime ${localModel}, which is not ready: state ${st.state}${st.error ? ` (${st.error})` : ''}, active ${st.activeModel}`);
  }
  const apiKey = opts.createKey === false ? '' : (await running.services.apiKeys.create('test')).key;
  return { ...running, dataDir, adminKey: config.adminKey!, apiKey, auth: { Authorization: `Bearer ${apiKey}` } };
}

/** Posts a multipart transcription request with fetch. */
export async function transcribe(
  server: { url: string },
  fields: Record<string, string | Blob | (string | Blob)[] | undefined>,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    for (const item of Array.isArray(v) ? v : [v]) {
      if (item instanceof Blob) form.append(k, item, 'audio.wav');
      else form.append(k, item);
    }
  }
  return fetch(`${server.url}/v1/audio/transcriptions`, { method: 'POST', body: form, headers, signal });
}

export const wavBlob = (bytes: Buffer): Blob => new Blob([bytes as unknown as BlobPart], { type: 'audio/wav' });

/**
 * Holds the server's model loads at a gate until `open()`: a test sees the
 * "loading" state however fast the load is. `restore()` opens the gate and
 * puts the real loader back (call it in a finally).
 */
export function gateModelLoads(server: TestServer): { open(): void; restore(): void } {
  const engine = server.services.local;
  const realLoader = engine.loader;
  let open = () => {};
  const gate = new Promise<void>((resolve) => (open = resolve));
  engine.loader = async (...args) => {
    await gate;
    return realLoader(...args);
  };
  return {
    open: () => open(),
    restore: () => {
      open();
      engine.loader = realLoader;
    },
  };
}
