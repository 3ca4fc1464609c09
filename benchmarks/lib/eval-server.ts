// Our server as the eval runs it: in this process on 127.0.0.1, real base
// (q8_0 unless told otherwise) installed in a temporary data dir, 2 threads,
// one decoding configuration, and an `openai` client with a fresh key.
// close() stops it and removes the data dir.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI from 'openai';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/log';
import { startServer, type RunningServer } from '../../src/server';
import { openDatabase } from '../../src/store/open-database';
import { SettingsStore } from '../../src/store/settings';
import type { EncoderWindow } from '../../src/stt/local/encoder-window';
import { VAD_FILE } from '../../src/stt/catalogue';
import { realModelPath, VAD_FIXTURE, type RealModelName } from '../../fixtures';

export const EVAL_THREADS = 2;

export interface OurConfig {
  /** Whisper beams; 0 keeps the shipped defaults (beam and window alike). */
  beam: number;
  window: EncoderWindow;
  /** The weights' file: q8_0, which the server installs, unless set. */
  weights?: RealModelName;
}

export interface EvalServer {
  server: RunningServer;
  client: OpenAI;
  close(): Promise<void>;
}

/** `silero`: the Silero model installed, so the speech gate (on by default) runs as a host that installed it. */
export async function startOurs(config: OurConfig, opts: { silero?: boolean } = {}): Promise<EvalServer> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'stt-eval-'));
  const removeDataDir = () => rmSync(dataDir, { recursive: true, force: true });
  try {
    mkdirSync(path.join(dataDir, 'models'));
    symlinkSync(realModelPath(config.weights ?? 'base-q8_0'), path.join(dataDir, 'models', 'ggml-base.bin'));
    if (opts.silero) symlinkSync(VAD_FIXTURE, path.join(dataDir, 'models', VAD_FILE.name));
    const db = await openDatabase({ dataDir, databaseUrl: null });
    await new SettingsStore(db).setRouting({ mode: 'local', localModel: 'whisper-base', cloud: null });
    await db.close();
  } catch (err) {
    removeDataDir();
    throw err;
  }
  const env: Record<string, string> = {
    PORT: '0', HOST: '127.0.0.1', STT_DATA_DIR: dataDir, STT_ADMIN_KEY: 'eval-admin-key-0123456789', STT_THREADS: String(EVAL_THREADS), LOG_LEVEL: 'silent',
    // faster-whisper computes just before each of our requests here; threads that follow the free cores would read that as a busy host.
    STT_FOLLOW_FREE_CORES: 'false',
  };
  if (config.beam > 0) Object.assign(env, { STT_BEAM_SIZE: String(config.beam), STT_ENCODER_WINDOW: config.window });
  const server = await startServer(loadConfig(env), createLogger('silent'));
  const close = async () => {
    await server.close();
    removeDataDir();
  };
  try {
    for (let i = 0; i < 3000 && server.services.local.status().state === 'loading'; i++) await sleep(10);
    if (server.services.local.status().state !== 'ready') throw new Error(`model did not load: ${server.services.local.status().error}`);
    const { key } = await server.services.apiKeys.create('eval');
    return { server, client: new OpenAI({ apiKey: key, baseURL: `${server.url}/v1`, maxRetries: 0, timeout: 600_000 }), close };
  } catch (err) {
    await close();
    throw err;
  }
}
