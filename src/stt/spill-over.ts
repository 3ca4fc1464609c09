// Spill-over: in Local mode, a request the local runtime cannot take in time
// (its queue is full, its model is loading, or the queue's predicted wait is
// longer than the host allows) goes to the host's cloud target instead of
// being answered 503. Decided before the upload is decoded, so a spilled
// request keeps its WAV for the provider. A key marked local-only never
// spills: its audio must not leave the host.
import type { Metrics, SpillReason } from '../metrics';
import type { LocalEngine } from './local/engine';
import type { SttRouter, Target } from './router';

export interface Spill {
  providerId: string;
  model: string;
  reason: SpillReason;
}

/**
 * Where this request spills to, or null to run it locally (or be refused as
 * before). `acceptedBy` re-checks the request's fields against the target:
 * one the provider cannot honour (a translation for Deepgram) stays local.
 */
export async function chooseSpill(
  stt: SttRouter,
  local: LocalEngine,
  localOnly: boolean,
  acceptedBy: (target: Target) => boolean,
  metrics?: Pick<Metrics, 'spills'>,
): Promise<Spill | null> {
  const routing = await stt.current();
  if (localOnly || routing.mode !== 'local' || !routing.spillover) return null;
  const { scheduler } = local;
  const maxWait = routing.spillover.maxWaitSeconds;
  const reason: SpillReason | null = scheduler.isFull() ? 'queue_full'
    : local.status().state === 'loading' && !local.servingRuntime() ? 'model_loading'
    : maxWait !== null && scheduler.estimatedWaitSeconds() > maxWait ? 'predicted_wait'
    : null;
  if (!reason) return null;
  const spill = await stt.spillTarget();
  if (!spill || !acceptedBy(spill.target)) return null;
  metrics?.spills.inc({ reason });
  return { providerId: spill.providerId, model: spill.model, reason };
}
