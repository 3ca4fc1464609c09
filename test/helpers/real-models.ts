// The server with real Whisper weights (npm run models:real, run by `npm
// test`'s pretest). Missing weights fail the test with the reason; they are
// never skipped (fixtures/models.ts realModelPath).
import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { realModelPath, VAD_FIXTURE, type RealModelName } from '../../fixtures';
import { startTestServer, tempDataDir, type TestServer } from './server';
import { VAD_FILE } from '../../src/stt/catalogue';

/**
 * The server with a real model as whisper-base, decoding without caps: greedy,
 * no fallback. `vad` installs the Silero model (used when STT_VAD=true or a request asks,
 * and otherwise by the speech gate, STT_SPEECH_GATE).
 */
export async function startRealServer(
  name: RealModelName,
  opts: { vad?: boolean; env?: Record<string, string>; logs?: Record<string, unknown>[] } = {},
): Promise<TestServer> {
  const model = realModelPath(name);
  const dataDir = tempDataDir();
  mkdirSync(path.join(dataDir, 'models'));
  symlinkSync(model, path.join(dataDir, 'models', 'ggml-base.bin'));
  if (opts.vad) symlinkSync(VAD_FIXTURE, path.join(dataDir, 'models', VAD_FILE.name));
  return startTestServer({ dataDir, installModels: false, routing: { mode: 'local', localModel: 'whisper-base' }, env: { STT_MAX_TOKENS: '0', ...opts.env }, logs: opts.logs });
}
