import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');
export const SHARED = path.resolve(ROOT, '..', 'shared');
export const AUDIO_DIR = path.join(SHARED, 'audio');
export const BIN_DIR = path.join(ROOT, 'build', 'bin');
/** Real Silero VAD v6.2.0 weights, identical to the released ggml-silero-v6.2.0.bin. */
export const VAD_FIXTURE = path.join(SHARED, 'fixtures', 'models', 'for-tests-silero-v6.2.0-ggml.bin');
