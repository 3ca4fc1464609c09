// Real Whisper weights (npm run models:real, run by `npm test`'s pretest).
// Missing weights fail the test with the reason; they are never skipped.
import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { realModelPath, type RealModelName } from '../../scripts/lib/real-models';
import { startTestServer, tempDataDir, type TestServer } from './server';

export { realModelPath };

/** The server with a real model as whisper-base, decoding without caps: greedy, no fallback. */
export async function startRealServer(name: RealModelName): Promise<TestServer> {
  const model = realModelPath(name);
  const dataDir = tempDataDir();
  mkdirSync(path.join(dataDir, 'models'));
  symlinkSync(model, path.join(dataDir, 'models', 'ggml-base.bin'));
  return startTestServer({ dataDir, installModels: false, routing: { mode: 'local', localModel: 'whisper-base' }, env: { STT_MAX_TOKENS: '0' } });
}
