// Where the pinned whisper.cpp source is (scripts/whisper-source.js finds and checks it).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '../../fixtures/paths';

export function whisperSourceDir(): string {
  return execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'whisper-source.js')], { encoding: 'utf8' }).trim();
}
