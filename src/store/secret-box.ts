// Encrypts provider keys at rest with AES-256-GCM. The key is STT_SECRET_KEY
// (64 hex characters) or a random key kept in $STT_DATA_DIR/secret.key (0600).
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { writeSecretFile } from './secret-file';

const VERSION = 'v1';

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

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  open(sealed: string): string {
    const [version, payload] = sealed.split(':');
    if (version !== VERSION || !payload) throw new Error('unknown secret format');
    const raw = Buffer.from(payload, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}
