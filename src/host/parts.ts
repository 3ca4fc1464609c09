// What every host operation (routing.ts, local-models.ts, providers.ts) works on:
// the stores, and the running server's parts when there is one.
import type { LocalEngine } from '../stt/local/engine';
import type { ModelDownloader } from '../stt/local/downloader';
import type { LoadMarker } from '../stt/local/load-marker';
import type { Backends } from '../stt/backends';
import type { ProviderStore } from '../store/providers';
import type { SettingsStore } from '../store/settings';

export interface HostParts {
  modelsDir: string;
  allowInsecureLoopback: boolean;
  /** STT_ALLOW_PRIVATE_ADDRESSES: provider base URLs on loopback or private networks. */
  allowPrivateAddresses?: boolean;
  settings: SettingsStore;
  providers: ProviderStore;
  loadMarker: LoadMarker;
  /**
   * The running server's parts. Absent in the admin CLI: a server that runs
   * meanwhile picks up what the CLI wrote within its routing poll.
   */
  server?: { local: LocalEngine; stt: Backends; downloader: ModelDownloader };
}
