// Host management: the rules for routing, local runtimes and providers, in
// one place. The admin API (src/routes/admin.ts) and the admin CLI
// (src/cli/admin.ts) only adapt them. As in better-sqlite3's lib/database.js,
// each operation lives in its own file here and checks everything it is asked
// before it writes anything.
import { changeRouting } from './routing';
import { deleteRuntime, listRuntimes, startDownload } from './local-models';
import { putProvider } from './providers';
import type { HostParts } from './parts';

export type { HostParts } from './parts';

export class Host {
  constructor(readonly parts: HostParts) {}

  changeRouting = (change: Parameters<typeof changeRouting>[1]) => changeRouting(this.parts, change);
  listRuntimes = () => listRuntimes(this.parts);
  startDownload = (id: string, variant: string | undefined) => startDownload(this.parts, id, variant);
  deleteRuntime = (id: string) => deleteRuntime(this.parts, id);
  putProvider = (id: string, update: Parameters<typeof putProvider>[2]) => putProvider(this.parts, id, update);
}
