// The package's root directory, whether running from src/ (tsx) or dist/src/.
import { existsSync } from 'node:fs';
import path from 'node:path';

export function packageRoot(from: string = __dirname): string {
  let dir = from;
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('stt-gateway: package root not found');
    dir = parent;
  }
  return dir;
}
