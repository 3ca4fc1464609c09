// Fetches catalogue model files from STT_MODEL_BASE_URL into the models
// directory. The file streams to a hidden ".<name>.partial" (never a
// catalogue name, so never "installed"), resumes with a Range request after
// an interruption, is checked (size, sha256 where known, model structure)
// and only then renamed into place.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import type { Logger } from '../../log';
import { inspectModelFile } from '../../native/model-file';
import type { RuntimeFile, RuntimeSpec } from '../catalogue';

export interface DownloadStatus {
  state: 'downloading' | 'verifying' | 'done' | 'failed';
  file: string;
  receivedBytes: number;
  totalBytes: number | null;
  sha256: string | null;
  /** True when the sha256 matched a published value; false when it was only recorded. */
  checksumVerified: boolean;
  error: string | null;
}

/** No byte for this long aborts the transfer (it can be resumed). */
const STALL_MS = 60_000;

export class ModelDownloader {
  private readonly status = new Map<string, DownloadStatus>();
  private readonly running = new Map<string, AbortController>();

  constructor(private readonly modelsDir: string, private readonly baseUrl: string, private readonly logger: Logger) {}

  progress(runtimeId: string): DownloadStatus | null {
    return this.status.get(runtimeId) ?? null;
  }

  isRunning(runtimeId: string): boolean {
    return this.running.has(runtimeId);
  }

  /** Starts in the background; the caller checked that none runs for this runtime. */
  start(spec: RuntimeSpec, file: RuntimeFile): Promise<void> {
    const controller = new AbortController();
    this.running.set(spec.id, controller);
    const status: DownloadStatus = {
      state: 'downloading', file: file.name, receivedBytes: 0, totalBytes: file.bytes ?? null,
      sha256: null, checksumVerified: false, error: null,
    };
    this.status.set(spec.id, status);
    return this.run(spec, file, status, controller.signal)
      .catch((err) => {
        status.state = 'failed';
        status.error = (err as Error).message;
        this.logger.warn({ runtime: spec.id, file: file.name, err: status.error }, 'model download failed');
      })
      .finally(() => this.running.delete(spec.id));
  }

  /** Aborts a running download (used by shutdown). */
  abortAll(): void {
    for (const c of this.running.values()) c.abort();
  }

  private async run(spec: RuntimeSpec, file: RuntimeFile, status: DownloadStatus, signal: AbortSignal): Promise<void> {
    const final = path.join(this.modelsDir, file.name);
    const partial = path.join(this.modelsDir, `.${file.name}.partial`);
    const url = `${this.baseUrl.replace(/\/+$/, '')}/${file.urlPath}`;
    const have = await stat(partial).then((s) => s.size, () => 0);

    const stall = new AbortController();
    let stallTimer = setTimeout(() => stall.abort(), STALL_MS);
    const res = await fetch(url, {
      headers: have > 0 ? { Range: `bytes=${have}-` } : {},
      signal: AbortSignal.any([signal, stall.signal]),
      redirect: 'follow',
    });
    const resumed = res.status === 206 && have > 0;
    if (res.status !== 200 && !resumed) {
      await res.body?.cancel();
      clearTimeout(stallTimer);
      if (res.status === 416 && have > 0) await rm(partial, { force: true }); // stale partial: start over next time
      throw new Error(`download server answered HTTP ${res.status}`);
    }
    const length = Number(res.headers.get('content-length'));
    status.receivedBytes = resumed ? have : 0;
    if (Number.isFinite(length) && length > 0) status.totalBytes = (resumed ? have : 0) + length;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        status.receivedBytes += chunk.length;
        clearTimeout(stallTimer);
        stallTimer = setTimeout(() => stall.abort(), STALL_MS);
        cb(null, chunk);
      },
    });
    try {
      await pipeline(Readable.fromWeb(res.body as never), counter, createWriteStream(partial, { flags: resumed ? 'a' : 'w' }));
    } finally {
      clearTimeout(stallTimer);
    }

    status.state = 'verifying';
    const size = (await stat(partial)).size;
    const expectedSize = file.bytes ?? status.totalBytes;
    if (expectedSize !== null && size !== expectedSize) {
      await rm(partial, { force: true });
      throw new Error(`size mismatch: got ${size} bytes, expected ${expectedSize}`);
    }
    const hash = createHash('sha256');
    await pipeline(createReadStream(partial), hash);
    status.sha256 = hash.digest('hex');
    if (file.sha256 && status.sha256 !== file.sha256) {
      await rm(partial, { force: true });
      throw new Error(`sha256 mismatch: got ${status.sha256}, expected ${file.sha256}`);
    }
    status.checksumVerified = !!file.sha256;
    try {
      const info = await inspectModelFile(partial);
      if (info.family !== spec.family) throw new Error(`the file is a ${info.family} model, ${spec.id} needs ${spec.family}`);
    } catch (err) {
      await rm(partial, { force: true });
      throw new Error(`downloaded file is not a usable model: ${(err as Error).message}`);
    }
    await rename(partial, final);
    status.state = 'done';
    this.logger.info(
      { runtime: spec.id, file: file.name, bytes: size, sha256: status.sha256, checksumVerified: status.checksumVerified },
      status.checksumVerified ? 'model downloaded and verified' : 'model downloaded; no published checksum, recorded its sha256',
    );
  }
}
