// Whether the current route can serve a transcription now (GET /ready): a
// load balancer's health check, unlike /health, which only says the process
// answers. Local: a model loaded. Cloud: the provider enabled, with a key, and
// its last call not a recent failure. A model that keeps serving while
// another loads counts as ready; with none serving, a spill-over target does.
import type { Services } from '../services';
import type { ReadyView } from '../admin-api';

/** A provider failure this recent makes the replica not ready; older ones may have passed (no call since could tell). */
export const PROVIDER_FAILURE_WINDOW_MS = 30_000;

export type Readiness = ReadyView | { ready: false; mode: 'local' | 'cloud'; code: string; message: string };

export async function readiness(s: Pick<Services, 'stt' | 'local' | 'cloud'>, now = Date.now()): Promise<Readiness> {
  const routing = await s.stt.current();
  if (routing.mode === 'cloud' && routing.cloud) {
    const { providerId, model } = routing.cloud;
    if (!(await s.cloud.usable(providerId))) {
      return { ready: false, mode: 'cloud', code: 'provider_unavailable', message: `The provider "${providerId}" is not enabled or has no usable key.` };
    }
    const failure = s.cloud.failures.get(providerId);
    if (failure && now - Date.parse(failure.at) < PROVIDER_FAILURE_WINDOW_MS) {
      // No detail here: /ready needs no key (the host sees it in /admin/status).
      return { ready: false, mode: 'cloud', code: 'provider_failing', message: `The provider "${providerId}" failed its last call.` };
    }
    return { ready: true, mode: 'cloud', runtime: `${providerId}/${model}` };
  }
  const serving = s.local.servingRuntime();
  if (serving) return { ready: true, mode: 'local', runtime: serving };
  const local = s.local.status();
  if (local.state === 'loading') {
    // While the model loads, spill-over serves (src/stt/plan.ts): ready if its provider can.
    const spill = routing.spillover;
    if (spill && (await s.cloud.usable(spill.providerId))) return { ready: true, mode: 'local', runtime: `${spill.providerId}/${spill.model}` };
    return { ready: false, mode: 'local', code: 'model_loading', message: `The local model ${local.activeModel} is loading.` };
  }
  if (local.state === 'error') return { ready: false, mode: 'local', code: 'model_load_failed', message: 'The local model failed to load; /admin/status says why.' };
  return { ready: false, mode: 'local', code: 'no_active_model', message: 'No local speech model is active.' };
}
