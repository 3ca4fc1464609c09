// Secrets kept in files of the data dir (admin.key, secret.key, first-api.key):
// written to a fresh 0600 temporary file and renamed into place, so a crash
// never leaves half a key and an existing path is never written through.
import { renameSync, rmSync, writeFileSync } from 'node:fs';

export function writeSecretFile(file: string, secret: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  rmSync(tmp, { force: true }); // left by a crashed process with the same pid
  writeFileSync(tmp, secret + '\n', { mode: 0o600, flag: 'wx' });
  renameSync(tmp, file);
}
