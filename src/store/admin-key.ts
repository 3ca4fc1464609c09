// The admin bearer token: STT_ADMIN_KEY, or one generated on first start into
// $STT_DATA_DIR/admin.key (mode 0600). Compared in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface AdminKey {
  value: string;
  /** True when this start generated the key (the caller prints it once). */
  generated: boolean;
  file: string | null;
}

export function resolveAdminKey(dataDir: string, fromEnv: string | null): AdminKey {
  if (fromEnv) return { value: fromEnv, generated: false, file: null };
  const file = path.join(dataDir, 'admin.key');
  try {
    const value = readFileSync(file, 'utf8').trim();
    if (value) return { value, generated: false, file };
  } catch {
    // first start: generate below
  }
  const value = 'sk-admin-' + randomBytes(32).toString('base64url');
  writeFileSync(file, value + '\n', { mode: 0o600, flag: 'w' });
  return { value, generated: true, file };
}

const digest = (s: string) => createHash('sha256').update(s).digest();

export function adminKeyMatches(expected: string, presented: string): boolean {
  return timingSafeEqual(digest(expected), digest(presented));
}
