import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');
export const SHARED = path.resolve(ROOT, '..', 'shared');
export const AUDIO_DIR = path.join(SHARED, 'audio');
export const BIN_DIR = path.join(ROOT, 'build', 'bin');
