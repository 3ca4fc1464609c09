// Cloud provider records. Keys are sealed with SecretBox; the API only ever
// sees whether a key is set and a short hint.
import type { Database } from './db';
import { SharedRowCache } from './shared-cache';
import type { SecretBox } from './secret-box';
import type { SettingsStore } from './settings';

export type ProviderKind = 'openai' | 'deepgram';

export interface ProviderModel {
  id: string;
  alias: string | null;
}

export interface ProviderRecord {
  id: string;
  name: string;
  kind: ProviderKind;
  baseUrl: string;
  enabled: boolean;
  apiKeySet: boolean;
  apiKeyHint: string | null;
  models: ProviderModel[];
}

export interface ProviderUpdate {
  name?: string;
  kind?: ProviderKind;
  baseUrl?: string;
  /** A string sets the key, null clears it. */
  apiKey?: string | null;
  enabled?: boolean;
  models?: { id: string; alias?: string | null }[];
}

interface Row {
  id: string;
  name: string;
  kind: ProviderKind;
  base_url: string;
  enabled: number;
  api_key_enc: string | null;
  api_key_hint: string | null;
  models: string;
}

export const BUILT_IN_PROVIDERS: (Omit<ProviderRecord, 'apiKeySet' | 'apiKeyHint' | 'enabled'>)[] = [
  { id: 'openai', name: 'OpenAI', kind: 'openai', baseUrl: 'https://api.openai.com/v1',
    models: [{ id: 'whisper-1', alias: null }, { id: 'gpt-4o-transcribe', alias: null }, { id: 'gpt-4o-mini-transcribe', alias: null }] },
  { id: 'groq', name: 'Groq', kind: 'openai', baseUrl: 'https://api.groq.com/openai/v1',
    models: [{ id: 'whisper-large-v3', alias: null }, { id: 'whisper-large-v3-turbo', alias: null }] },
  { id: 'deepgram', name: 'Deepgram', kind: 'deepgram', baseUrl: 'https://api.deepgram.com/v1',
    models: [{ id: 'nova-3', alias: null }, { id: 'nova-2', alias: null }] },
];

/** A stored key that the current secret cannot open: sealed under another one, or for another row or base URL. */
export class UndecryptableKeyError extends Error {
  constructor(id: string) {
    super(`the stored API key of provider "${id}" cannot be decrypted: STT_SECRET_KEY or secret.key changed since it was set, or the row's base URL was changed outside the admin API; enter the key again`);
    this.name = 'UndecryptableKeyError';
  }
}

/** What a provider's key is sealed for: its row and the base URL it is sent to. */
const ownerOf = (r: { id: string; base_url: string }) => JSON.stringify(['provider', r.id, r.base_url]);

const hintOf = (key: string) => (key.length > 8 ? `…${key.slice(-4)}` : '…');

function toRecord(r: Row): ProviderRecord {
  return {
    id: r.id,
    name: r.name,
    kind: r.kind,
    baseUrl: r.base_url,
    enabled: r.enabled === 1,
    apiKeySet: r.api_key_enc !== null,
    apiKeyHint: r.api_key_hint,
    models: JSON.parse(r.models) as ProviderModel[],
  };
}

export class ProviderStore {
  /** Shared database only: rows by id, so a cloud request does not query it (shared-cache.ts). */
  private readonly rows: SharedRowCache<Row>;

  constructor(private readonly db: Database, private readonly box: SecretBox) {
    this.rows = new SharedRowCache<Row>(db, 'providers');
  }

  private row(id: string): Promise<Row | undefined> {
    return this.rows.read(id, () => this.db.get<Row>('SELECT * FROM providers WHERE id = ?', [id]));
  }

  async seedBuiltIns(): Promise<void> {
    const now = new Date().toISOString();
    for (const p of BUILT_IN_PROVIDERS) {
      await this.db.run(
        'INSERT INTO providers (id, name, kind, base_url, enabled, models, created_at, updated_at) VALUES (?, ?, ?, ?, 0, ?, ?, ?) ON CONFLICT (id) DO NOTHING',
        [p.id, p.name, p.kind, p.baseUrl, JSON.stringify(p.models), now, now],
      );
    }
  }

  async list(): Promise<ProviderRecord[]> {
    return (await this.db.all<Row>('SELECT * FROM providers ORDER BY created_at, id')).map(toRecord);
  }

  async get(id: string): Promise<ProviderRecord | undefined> {
    const row = await this.row(id);
    return row && toRecord(row);
  }

  /** The decrypted key, for adapters only. */
  async apiKey(id: string): Promise<string | null> {
    return (await this.withKey(id))?.apiKey ?? null;
  }

  /**
   * The record and its decrypted key from one read of the row, for adapters:
   * the base URL a key is sent to is the one it was opened for (two reads
   * could pair a key with a base URL written in between).
   */
  async withKey(id: string): Promise<{ record: ProviderRecord; apiKey: string | null } | undefined> {
    const row = await this.row(id);
    if (!row) return undefined;
    if (!row.api_key_enc) return { record: toRecord(row), apiKey: null };
    try {
      return { record: toRecord(row), apiKey: this.box.open(row.api_key_enc, ownerOf(row)) };
    } catch {
      throw new UndecryptableKeyError(id);
    }
  }

  /**
   * Once per database, at start: seals the keys stored before keys were bound
   * to their rows (v1) again for the row each is in, then records that it was
   * done. From then on a v1 key is refused like one that does not open, so a
   * v1 value written into a row later (from an old backup, say) is not bound
   * to whatever base URL that row then names. Replicas starting together may
   * both seal a key; each write replaces only the value it read.
   */
  async bindLegacyKeys(settings: SettingsStore): Promise<number> {
    if (await settings.providerKeysBoundAt()) return 0;
    const rows = await this.db.all<Row>('SELECT * FROM providers WHERE api_key_enc IS NOT NULL');
    let bound = 0;
    let unopened = 0;
    for (const row of rows) {
      if (!this.box.isLegacy(row.api_key_enc!)) continue;
      let plain: string;
      try {
        plain = this.box.openLegacy(row.api_key_enc!);
      } catch {
        // Sealed under another secret (a secret.key not restored yet?): refused at use, as before, and
        // bound at a later start once the right secret opens it.
        unopened++;
        continue;
      }
      await this.db.run('UPDATE providers SET api_key_enc = ? WHERE id = ? AND api_key_enc = ? AND base_url = ?',
        [this.box.seal(plain, ownerOf(row)), row.id, row.api_key_enc, row.base_url]);
      bound++;
    }
    if (unopened === 0) await settings.markProviderKeysBound();
    this.rows.forget();
    return bound;
  }

  /** Throws, naming the provider, unless this process's secret opens every stored provider key. */
  async checkKeysOpen(): Promise<void> {
    const rows = await this.db.all<Row>('SELECT id, base_url, api_key_enc FROM providers WHERE api_key_enc IS NOT NULL');
    for (const row of rows) {
      // A v2 key that does not open may be the secret or a row changed behind the store: the latter
      // must fail at use (key_undecryptable), not stop every replica; the secret_check row tells the secret.
      if (!this.box.isLegacy(row.api_key_enc!)) continue;
      try {
        this.box.openLegacy(row.api_key_enc!);
      } catch {
        throw new Error(`STT_SECRET_KEY does not open the key stored for provider "${row.id}": every replica sharing the database needs the STT_SECRET_KEY that stored it`);
      }
    }
  }

  /** Creates or updates in one statement; the caller validated `update` against the existing record. */
  async upsert(id: string, existing: ProviderRecord | undefined, update: ProviderUpdate): Promise<ProviderRecord> {
    const now = new Date().toISOString();
    const models = update.models?.map((m) => ({ id: m.id, alias: m.alias ?? null })) ?? existing?.models ?? [];
    const keyChange = update.apiKey === undefined ? undefined : update.apiKey === null ? null : update.apiKey;
    const row = {
      name: update.name ?? existing?.name ?? id,
      kind: update.kind ?? existing!.kind,
      base_url: update.baseUrl ?? existing!.baseUrl,
      enabled: (update.enabled ?? existing?.enabled ?? false) ? 1 : 0,
      models: JSON.stringify(models),
    };
    const sets = ['name = excluded.name', 'kind = excluded.kind', 'base_url = excluded.base_url', 'enabled = excluded.enabled',
      'models = excluded.models', 'updated_at = excluded.updated_at'];
    const owner = ownerOf({ id, base_url: row.base_url });
    const sealed: string | null = keyChange ? this.box.seal(keyChange, owner) : null;
    const hint = keyChange ? hintOf(keyChange) : null;
    if (keyChange !== undefined) sets.push('api_key_enc = excluded.api_key_enc', 'api_key_hint = excluded.api_key_hint');
    else {
      // A key was given for one destination: a new base URL without a new key drops it rather than send
      // it elsewhere (src/host/providers.ts asks for this; here too for an update read from a stale row).
      const stored = await this.db.get<Row>('SELECT base_url, api_key_enc FROM providers WHERE id = ?', [id]);
      if (stored?.api_key_enc && stored.base_url !== row.base_url) {
        sets.push('api_key_enc = excluded.api_key_enc', 'api_key_hint = excluded.api_key_hint');
      }
    }
    await this.db.run(
      `INSERT INTO providers (id, name, kind, base_url, enabled, api_key_enc, api_key_hint, models, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET ${sets.join(', ')}`,
      [id, row.name, row.kind, row.base_url, row.enabled, sealed, hint, row.models, now, now],
    );
    this.rows.forget();
    return (await this.get(id))!;
  }
}
