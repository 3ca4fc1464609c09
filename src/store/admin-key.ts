// The admin bearer token: STT_ADMIN_KEY, or one generated on first start into
// $STT_DATA_DIR/admin.key (mode 0600). Compared in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { writeSecretFile } from './secret-file';

export interface AdminKey {
  value: string;
  /** True when this start generated the key (the caller prints it once). */
  generated: boolean;
  file: string | null;
}

export function resolveAdminKey(dataDir: string, fromEnv: string | null): AdminKey {
  if (fromEnv) return { value: fromEnv, generated: false, file: null };
  const file = path.join(dataDir, 'admin.key');
  let value: string;
  try {
    value = readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`${file} cannot be read (${(err as Error).message})`);
    const generated = 'sk-admin-' + randomBytes(32).toString('base64url'); // first start
    writeSecretFile(file, generated);
    return { value: generated, generated: true, file };
  }
  if (value.length < 16) throw new Error(`${file} holds no usable admin key (under 16 characters); restore it or remove it to generate a new one`);
  return { value, generated: false, file };
}

const digest = (s: string) => createHash('sha256').update(s).digest();

export function adminKeyMatches(expected: string, presented: string): boolean {
  return timingSafeEqual(digest(expected), digest(presented));
}
