// Cancelling a job, the same from its key (DELETE /v1/audio/jobs/{id}), the
// host (DELETE /admin/jobs/{id}) and the admin CLI: a job that has not ended
// is cancelled (a runner holding it stops at its next checkpoint or lease
// renewal; `stopHere` stops it at once when it runs in this process), an
// ended one removed; its recording goes either way.
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { Job, JobStore } from '../store/jobs';

/** False when there was nothing to cancel or remove (it went meanwhile). */
export async function cancelOrRemove(store: JobStore, spoolDir: string, job: Job, stopHere?: (id: string) => void): Promise<boolean> {
  if (await store.cancel(job.id)) stopHere?.(job.id);
  else if (!(await store.remove(job.id))) return false;
  if (job.spool) {
    await rm(path.resolve(spoolDir, job.spool), { force: true });
    await store.forgetSpool(job.id);
  }
  return true;
}
