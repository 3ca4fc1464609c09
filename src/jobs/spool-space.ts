// Whether the job spool's disk has room for one more upload. The spool shares
// its disk with the database (by default both live under STT_DATA_DIR), so a
// burst of job uploads, each up to STT_MAX_JOB_UPLOAD_BYTES, must not fill it:
// every upload still arriving keeps a reservation of the most it can write
// (its Content-Length, or the limit for a chunked one), since its size is
// known only once it has been written.
import { statfs } from 'node:fs/promises';

/** Bytes an unprivileged process may still write on the disk holding `dir`. */
export async function freeBytes(dir: string): Promise<number> {
  const s = await statfs(dir);
  // Blocks are counted in the fragment size where the filesystem has one apart from bsize (FUSE, virtiofs,
  // ZFS: bsize can be 1 MiB over 4-KiB fragments); Node reports it from 24 (nodejs/node#62277), 20 does not.
  return s.bavail * ((s as { frsize?: number }).frsize ?? s.bsize);
}

/**
 * The most one upload can write to the spool: its declared Content-Length (Node's parser ends a body
 * there), capped at the upload limit; a chunked body declares none and may run to the limit.
 */
export function uploadBound(contentLength: number | undefined, chunked: boolean, maxUploadBytes: number): number {
  if (chunked || contentLength === undefined || !Number.isFinite(contentLength)) return maxUploadBytes;
  return Math.min(contentLength, maxUploadBytes);
}

/** Room for an upload of `bytes` beside the `reserved` bytes of those still arriving, with `minFreeBytes` left over. */
export function spoolHasRoom(free: number, reserved: number, bytes: number, minFreeBytes: number): boolean {
  return free - reserved - bytes >= minFreeBytes;
}
