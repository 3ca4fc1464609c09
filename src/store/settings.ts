// Key/value settings: the service id, the routing state, and when stored provider keys were bound to their rows.
import { randomUUID } from 'node:crypto';
import type { Database } from './db';

import type { Routing } from '../admin-api';

export type { Routing };
export type Mode = Routing['mode'];

export const DEFAULT_ROUTING: Routing = { mode: 'local', localModel: null, cloud: null, aliases: [], spillover: null };

export class SettingsStore {
  constructor(private readonly db: Database) {}

  private async read<T>(key: string): Promise<T | undefined> {
    const row = await this.db.get<{ value: string }>('SELECT value FROM settings WHERE key = ?', [key]);
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  private async write(key: string, value: unknown): Promise<void> {
    await this.db.run('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value', [
      key,
      JSON.stringify(value),
    ]);
  }

  /** Created once, kept across restarts. */
  async serviceId(): Promise<string> {
    return (await this.read<string>('service_id')) ?? this.claim('service_id', randomUUID());
  }

  /** The value stored under `key`, storing `value` first if there is none (the first writer wins a race). */
  async claim<T>(key: string, value: T): Promise<T> {
    await this.db.run('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING', [key, JSON.stringify(value)]);
    return (await this.read<T>(key)) as T;
  }

  /** When the provider keys stored before keys were bound to their rows were sealed again (providers.ts), if they were. */
  async providerKeysBoundAt(): Promise<string | undefined> {
    return this.read<string>('provider_keys_bound_at');
  }

  async markProviderKeysBound(): Promise<void> {
    await this.claim('provider_keys_bound_at', new Date().toISOString());
  }

  async routing(): Promise<Routing> {
    return { ...DEFAULT_ROUTING, ...(await this.read<Routing>('routing')) };
  }

  /** False until routing was first stored (a new host). */
  async hasRouting(): Promise<boolean> {
    return (await this.read<Routing>('routing')) !== undefined;
  }

  /** Aliases left out are none. */
  async setRouting(routing: Omit<Routing, 'aliases' | 'spillover'> & Partial<Pick<Routing, 'aliases' | 'spillover'>>): Promise<void> {
    await this.write('routing', { aliases: [], spillover: null, ...routing });
  }
}
