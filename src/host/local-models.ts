// The catalogue's local runtimes on this host: listed with their files and
// downloads, downloaded, deleted.
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { installedFile, RUNTIMES } from '../stt/catalogue';
import { partialFileName, type DownloadStatus } from '../stt/local/downloader';
import { ConflictError, InvalidInputError } from '../domain-errors';
import type { HostParts } from './parts';
import type { RuntimeEntry } from '../admin-api';
import { knownRuntime } from './runtime-file';


export async function listRuntimes(h: HostParts): Promise<RuntimeEntry[]> {
  const routing = await h.settings.routing();
  return Promise.all(RUNTIMES.map(async (r) => {
    // Progress is copied before looking at the disk: a download says "done"
    // only after its file is in place, so a "done" copy always finds the file.
    const d = h.server?.downloader.progress(r.id);
    const f = await installedFile(h.modelsDir, r);
    return {
      id: r.id,
      family: r.family,
      installed: !!f,
      active: routing.localModel === r.id,
      file: f?.name ?? null,
      bytes: f?.bytes ?? null,
      download: d ? { ...d } : undefined,
    };
  }));
}

export function startDownload(h: HostParts, id: string, variant: string | undefined): { id: string; download: DownloadStatus | null } {
  const downloader = serverPart(h).downloader;
  const spec = knownRuntime(id, 'id', 'not_found');
  const file = variant === undefined ? spec.files[0] : spec.files.find((f) => f.name === variant);
  if (!file) throw new InvalidInputError('unknown_variant', `"${variant}" is not a file of ${spec.id}; one of ${spec.files.map((f) => f.name).join(', ')}.`, 'variant');
  if (downloader.isRunning(spec.id)) throw new ConflictError('download_in_progress', `A download of ${spec.id} is already running.`, 'id');
  void downloader.start(spec, file);
  return { id: spec.id, download: downloader.progress(spec.id) };
}

/** Removes a runtime's files and any partial download of them; never the active runtime's. */
export async function deleteRuntime(h: HostParts, id: string): Promise<void> {
  const { local, downloader } = serverPart(h);
  const spec = knownRuntime(id, 'id', 'not_found');
  const routing = await h.settings.routing();
  if (routing.localModel === spec.id || local.status().activeModel === spec.id) {
    throw new ConflictError('runtime_active', `${spec.id} is the active local runtime; activate another or none first.`, 'id');
  }
  if (downloader.isRunning(spec.id)) throw new ConflictError('download_in_progress', `${spec.id} is being downloaded.`, 'id');
  for (const f of spec.files) {
    await rm(path.join(h.modelsDir, f.name), { force: true });
    await rm(path.join(h.modelsDir, partialFileName(f.name)), { force: true });
  }
}

/** Downloads and deletions run beside a server, which knows what is loaded and downloading. */
function serverPart(h: HostParts): NonNullable<HostParts['server']> {
  if (!h.server) throw new Error('this operation needs the running server');
  return h.server;
}
