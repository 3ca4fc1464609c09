// Makes a running server follow the stored routing: the router drops its
// cached copy, and the local engine loads (in the background) or lets go of
// its runtime. /health answers meanwhile; transcriptions get 503
// model_loading until the load is done.
import type { Routing } from '../store/settings';
import type { LocalEngine } from '../stt/local/engine';
import type { Backends } from '../stt/backends';

export function followRouting(
  server: { local: LocalEngine; stt: Backends },
  routing: Routing,
  { retryFailed }: { retryFailed: boolean },
): void {
  server.stt.invalidate(routing);
  const { local } = server;
  const status = local.status();
  if (!routing.localModel) {
    if (status.state !== 'none') local.deactivate();
    return;
  }
  // A failed load is tried again only when the host asks; the routing poll
  // never retries one by itself (it would reload a broken file every poll).
  const load = status.state === 'error' ? retryFailed : status.activeModel !== routing.localModel;
  if (load) local.activate(routing.localModel).catch(() => {}); // the engine logs and reports the failure
}
