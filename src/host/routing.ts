// Routing: which backend serves /v1 (local runtime or cloud provider + model).
import type { Routing } from '../store/settings';
import type { ProviderStore } from '../store/providers';
import { InvalidInputError } from '../domain-errors';
import { LOCAL_ALIAS } from '../stt/backends';
import type { HostParts } from './parts';
import { activatableRuntime } from './runtime-file';
import { followRouting } from './follow-routing';

export interface RoutingChange {
  mode?: 'local' | 'cloud';
  localModel?: string | null;
  cloud?: { providerId: string; model: string } | null;
  aliases?: string[];
  spillover?: { providerId: string; model: string; maxWaitSeconds?: number | null } | null;
}

/** Names a client library may send: letters, digits and . _ : / - (OpenAI's own ids fit). */
const ALIAS_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,99}$/;
const MAX_ALIASES = 20;

/** Applies a partial change; what it leaves out stays as stored. */
export async function changeRouting(h: HostParts, change: RoutingChange): Promise<Routing> {
  const current = await h.settings.routing();
  const next: Routing = {
    mode: change.mode ?? current.mode,
    localModel: change.localModel === undefined ? current.localModel : change.localModel,
    cloud: change.cloud === undefined ? current.cloud : change.cloud,
    aliases: change.aliases ?? current.aliases,
    spillover: change.spillover === undefined ? current.spillover : change.spillover && { ...change.spillover, maxWaitSeconds: change.spillover.maxWaitSeconds ?? null },
  };
  if (change.aliases) checkAliases(change.aliases);
  if (next.localModel !== null && change.localModel !== undefined) await activatableRuntime(h.modelsDir, next.localModel, 'localModel');
  if (next.cloud && (change.cloud !== undefined || next.mode === 'cloud')) await checkCloudTarget(h.providers, next.cloud);
  if (change.spillover) await checkCloudTarget(h.providers, change.spillover, 'spillover');
  if (next.mode === 'cloud' && !next.cloud) throw new InvalidInputError('missing_cloud_target', 'Cloud mode needs a cloud target {providerId, model}.', 'cloud');

  await h.settings.setRouting(next);
  // Naming a runtime (or none) is the host's explicit choice, which lifts a
  // crashed load's block; a change of mode alone keeps it.
  if (change.localModel !== undefined) {
    if (h.server) h.server.local.forgetCrashedLoad();
    else h.loadMarker.clear();
  }
  // The host asked: a runtime that failed to load is tried again.
  if (h.server) followRouting(h.server, next, { retryFailed: true });
  return next;
}

function checkAliases(aliases: string[]): void {
  if (aliases.length > MAX_ALIASES) throw new InvalidInputError('invalid_value', `At most ${MAX_ALIASES} aliases.`, 'aliases');
  for (const [i, alias] of aliases.entries()) {
    if (!ALIAS_PATTERN.test(alias)) {
      throw new InvalidInputError('invalid_value', `"${alias}" is not a model name: 1-100 letters, digits, ".", "_", ":", "/" or "-".`, `aliases.${i}`);
    }
    if (alias === LOCAL_ALIAS || aliases.indexOf(alias) !== i) {
      throw new InvalidInputError('invalid_value', `Aliases must be unique and not "${LOCAL_ALIAS}" (always accepted for the local runtime).`, `aliases.${i}`);
    }
  }
}

/** A provider and model that can take requests now; `field` names the routing field in refusals. */
async function checkCloudTarget(providers: ProviderStore, cloud: { providerId: string; model: string }, field: 'cloud' | 'spillover' = 'cloud'): Promise<void> {
  const p = await providers.get(cloud.providerId);
  if (!p) throw new InvalidInputError('unknown_provider', `Unknown provider "${cloud.providerId}".`, `${field}.providerId`);
  if (!p.models.some((m) => m.id === cloud.model)) {
    throw new InvalidInputError('unknown_model', `Provider "${p.id}" has no model "${cloud.model}".`, `${field}.model`);
  }
  if (!p.enabled) throw new InvalidInputError('provider_disabled', `Provider "${p.id}" is disabled.`, `${field}.providerId`);
  if (!p.apiKeySet) throw new InvalidInputError('provider_key_missing', `Provider "${p.id}" has no API key.`, `${field}.providerId`);
}
