// `loading-model.json` in the data dir: present exactly while a model is
// being loaded. The native loaders run in-process, so a model that crashes
// whisper.cpp or parakeet.cpp (or is killed by the OOM killer) takes the
// server with it, and the stored routing would load it again at every start.
// A marker still there at start says the last process died inside a load.
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { writeSecretFile } from '../../store/secret-file';

export interface LoadRecord {
  runtime: string;
  file: string;
  /** ISO time the load began. */
  startedAt: string;
}

export const LOAD_MARKER_FILE = 'loading-model.json';

export class LoadMarker {
  readonly file: string;

  constructor(dataDir: string) {
    this.file = path.join(dataDir, LOAD_MARKER_FILE);
  }

  /** Written before the native load starts; atomically, so a crash never leaves half a marker. */
  write(record: LoadRecord): void {
    writeSecretFile(this.file, JSON.stringify(record));
  }

  clear(): void {
    rmSync(this.file, { force: true });
  }

  /** The load a previous process died in, or null. */
  read(): LoadRecord | null {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    try {
      const r = JSON.parse(text) as Partial<LoadRecord>;
      if (typeof r.runtime === 'string' && typeof r.file === 'string' && typeof r.startedAt === 'string') {
        return { runtime: r.runtime, file: r.file, startedAt: r.startedAt };
      }
    } catch {
      // fall through: still a crash, only its details are lost
    }
    return { runtime: 'unknown', file: 'unknown', startedAt: 'unknown' };
  }
}
