// Where one request goes, decided once from one reading of the routing
// state: the local runtime, the Cloud-mode provider, or (in Local mode) the
// host's spill-over provider when the local runtime cannot take the request
// in time: its queue is full, its model is loading with none serving, or the
// queue's predicted wait is longer than the host allows. A key over its share
// of the queue never spills. Decided before the
// upload is decoded, so a spilled request keeps its WAV for the provider. A
// key marked local-only never spills (its audio must not leave the host),
// and a request the provider could not honour (a translation for Deepgram)
// stays local.
import type { Metrics, SpillReason } from '../metrics';
import type { LocalEngine } from './local/engine';
import { canHonour, type Asks } from './capabilities';
import type { CloudTarget, Route, Backends } from './backends';

export type Plan =
  | { where: 'local' }
  | { where: 'cloud'; cloud: CloudTarget }
  | { where: 'spill'; cloud: CloudTarget; reason: SpillReason };

/** Why the local runtime cannot take a request in time, or null when it can. */
export function spillReason(local: LocalEngine, maxWaitSeconds: number | null): SpillReason | null {
  const { scheduler } = local;
  if (scheduler.isFull()) return 'queue_full';
  if (local.status().state === 'loading' && !local.servingRuntime()) return 'model_loading';
  if (maxWaitSeconds !== null && scheduler.estimatedWaitSeconds() > maxWaitSeconds) return 'predicted_wait';
  return null;
}

export async function plan(
  route: Route,
  asks: Asks,
  key: { localOnly: boolean; keyId?: string },
  parts: { stt: Pick<Backends, 'spillCapabilities'>; local: LocalEngine; metrics?: Pick<Metrics, 'spills'> },
): Promise<Plan> {
  if (route.cloud) return { where: 'cloud', cloud: route.cloud };
  const spillover = route.spillover;
  if (key.localOnly || !spillover) return { where: 'local' };
  // A key over its share of the queue is refused (429), not sent to the paid provider, where no share applies.
  if (parts.local.scheduler.isOwnerFull(key.keyId)) return { where: 'local' };
  const reason = spillReason(parts.local, spillover.maxWaitSeconds);
  if (!reason) return { where: 'local' };
  const caps = await parts.stt.spillCapabilities(spillover.providerId);
  if (!caps || !canHonour(caps, asks)) return { where: 'local' };
  parts.metrics?.spills.inc({ reason });
  return { where: 'spill', cloud: { providerId: spillover.providerId, model: spillover.model }, reason };
}
