// Cloud providers: created and changed under rules that keep the live cloud
// route working and never send a stored key to a destination it was not given for.
import { checkRemoteUrlWithRules } from '../net/remote-url';
import type { ProviderRecord, ProviderUpdate } from '../store/providers';
import { LOCAL_ALIAS } from '../stt/backends';
import { ConflictError, InvalidInputError } from '../domain-errors';
import type { HostParts } from './parts';

const ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/**
 * A provider's model id or alias: visible ASCII, no spaces. It goes out in
 * the X-Stt-Runtime header of every answer it serves, where Node refuses
 * other characters: such a name would turn each (already billed) answer into a 500.
 */
const MODEL_NAME_PATTERN = /^[\x21-\x7e]{1,200}$/;

export async function putProvider(h: HostParts, id: string, update: ProviderUpdate): Promise<{ record: ProviderRecord; created: boolean }> {
  if (!ID_PATTERN.test(id)) throw new InvalidInputError('invalid_value', 'A provider id is 1-64 lower-case letters, digits, "-" or "_".', 'id');
  const existing = await h.providers.get(id);
  if (!existing) {
    if (!update.kind) throw new InvalidInputError('missing_field', 'A new provider needs "kind" (openai or deepgram).', 'kind');
    if (!update.baseUrl) throw new InvalidInputError('missing_field', 'A new provider needs "baseUrl".', 'baseUrl');
  }
  if (update.baseUrl !== undefined) {
    const problem = checkRemoteUrlWithRules(update.baseUrl, { allowInsecureLoopback: h.allowInsecureLoopback, allowPrivate: h.allowPrivateAddresses ?? false });
    if (problem) throw new InvalidInputError('invalid_value', `"baseUrl": ${problem}.`, 'baseUrl');
  }
  if (update.models) checkModelNames(id, update.models);
  // A stored key was given for one destination: moving the provider to
  // another base URL or kind without a new key would send the old key there.
  const moves = !!existing && ((update.baseUrl !== undefined && update.baseUrl !== existing.baseUrl) ||
    (update.kind !== undefined && update.kind !== existing.kind));
  if (moves && update.apiKey === undefined) update = { ...update, apiKey: null };
  if (existing) await refuseBreakingTheCloudRoute(h, id, update, moves);

  const record = await h.providers.upsert(id, existing, update);
  h.server?.stt.invalidate();
  return { record, created: !existing };
}

function checkModelNames(id: string, models: NonNullable<ProviderUpdate['models']>): void {
  const seen = new Set<string>();
  for (const [i, m] of models.entries()) {
    for (const [field, name] of [['id', m.id], ['alias', m.alias]] as const) {
      if (name && !MODEL_NAME_PATTERN.test(name)) {
        throw new InvalidInputError('invalid_value', `A model ${field} is 1-200 visible ASCII characters, without spaces: it is sent in a response header.`, `models.${i}.${field}`);
      }
    }
    const alias = m.alias || `${id}/${m.id}`;
    if (seen.has(m.id) || seen.has(alias) || alias === LOCAL_ALIAS) {
      throw new InvalidInputError('invalid_value', `Model ids and aliases must be unique and not "${LOCAL_ALIAS}".`, `models.${i}`);
    }
    seen.add(m.id);
    seen.add(alias);
  }
}

async function refuseBreakingTheCloudRoute(h: HostParts, id: string, update: ProviderUpdate, moves: boolean): Promise<void> {
  const routing = await h.settings.routing();
  const route = routing.cloud;
  if (routing.mode !== 'cloud' || !route || route.providerId !== id) return;
  if (update.enabled === false) throw new ConflictError('provider_in_use', 'This provider serves the current cloud route; switch routing first.', 'enabled');
  if (update.apiKey === null) {
    throw new ConflictError('provider_in_use', moves
      ? 'This provider serves the current cloud route; a new baseUrl or kind needs its API key in the same request.'
      : 'This provider serves the current cloud route; its key cannot be cleared.', 'apiKey');
  }
  if (update.models && !update.models.some((m) => m.id === route.model)) {
    throw new ConflictError('provider_in_use', `The current cloud route uses model "${route.model}".`, 'models');
  }
}
