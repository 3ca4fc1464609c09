// Encrypts provider keys at rest with AES-256-GCM. The key is STT_SECRET_KEY
// (64 hex characters) or a random key kept in $STT_DATA_DIR/secret.key (0600).
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { writeSecretFile } from './secret-file';

/**
 * v2 (since 2026-12-03): sealed with associated data, the value's owner (a
 * provider's id and base URL), so a sealed key copied to another row, or left
 * in a row whose base URL was changed behind the admin API, no longer opens:
 * someone who can write the database but lacks the secret cannot point a
 * stored key at a server of theirs. v1: without (written before).
 */
const VERSION = 'v2';
const LEGACY = 'v1';

export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  static open(dataDir: string, fromEnv: string | null): SecretBox {
    if (fromEnv) return new SecretBox(Buffer.from(fromEnv, 'hex'));
    const file = path.join(dataDir, 'secret.key');
    let hex: string;
    try {
      hex = readFileSync(file, 'utf8').trim();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`${file} cannot be read (${(err as Error).message}); stored provider keys need it`);
      const key = randomBytes(32); // first start
      writeSecretFile(file, key.toString('hex'));
      return new SecretBox(key);
    }
    // Replacing a damaged key would make every stored provider key undecryptable: refuse instead.
    if (!/^[0-9a-f]{64}$/i.test(hex)) throw new Error(`${file} is not 64 hex characters; restore it, or remove it and re-enter the provider keys`);
    return new SecretBox(Buffer.from(hex, 'hex'));
  }

  /**
   * A secret of its own for `label`, derived from the key (HMAC-SHA256): the
   * same on every replica that shares STT_SECRET_KEY, and nothing to store.
   */
  derive(label: string): Buffer {
    return createHmac('sha256', this.key).update(label).digest();
  }

  /** Seals `plain` for `owner`: only open() with the same owner opens it. */
  seal(plain: string, owner = ''): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(owner, 'utf8'));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  /** What seal(…, owner) sealed; throws for another owner, another key, a changed byte or a v1 value. */
  open(sealed: string, owner = ''): string {
    return this.decrypt(sealed, VERSION, Buffer.from(owner, 'utf8'));
  }

  /** Whether `sealed` is a v1 value, sealed for no owner. */
  isLegacy(sealed: string): boolean {
    return sealed.startsWith(`${LEGACY}:`);
  }

  /** A v1 value: only to seal it again for its owner once, or to check the key with. */
  openLegacy(sealed: string): string {
    return this.decrypt(sealed, LEGACY, null);
  }

  private decrypt(sealed: string, version: string, owner: Buffer | null): string {
    const [tag, payload] = sealed.split(':');
    if (tag !== version || !payload) throw new Error('unknown secret format');
    const raw = Buffer.from(payload, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    if (owner) decipher.setAAD(owner);
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}
