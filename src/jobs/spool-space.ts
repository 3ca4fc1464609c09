// Whether the job spool's disk has room for one more upload. The spool shares
// its disk with the database (by default both live under STT_DATA_DIR), so a
// burst of job uploads, each up to STT_MAX_JOB_UPLOAD_BYTES, must not fill it:
// every upload still arriving is counted at that limit, since its size is
// known only once it has been written.
import { statfs } from 'node:fs/promises';

/** Bytes an unprivileged process may still write on the disk holding `dir`. */
export async function freeBytes(dir: string): Promise<number> {
  const s = await statfs(dir);
  // Blocks are counted in the fragment size where the filesystem has one apart from bsize (FUSE, virtiofs,
  // ZFS: bsize can be 1 MiB over 4-KiB fragments); Node reports it from 24 (nodejs/node#62277), 20 does not.
  return s.bavail * ((s as { frsize?: number }).frsize ?? s.bsize);
}

/** Room for one more upload: `arriving` uploads (this one included) at `maxUploadBytes` each, and `minFreeBytes` left over. */
export function spoolHasRoom(free: number, arriving: number, maxUploadBytes: number, minFreeBytes: number): boolean {
  return free - arriving * maxUploadBytes >= minFreeBytes;
}
