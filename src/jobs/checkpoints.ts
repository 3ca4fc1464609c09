// A running job's checkpoints (where its run would resume, and the segments
// before that point), kept as they arrive from the engine and written to the
// job's row one write at a time, the latest only: each holds all that came
// before it, so a write that waited on another loses nothing. A write the
// row refuses (the job was cancelled, or its lease went to another process)
// aborts `lost`.
import type { ResumePoint, Segment } from '../native';
import type { JobStore } from '../store/jobs';
import type { Logger } from '../log';

/** What a job's `partial` column holds. */
export interface Partial {
  resume: ResumePoint;
  segments: Segment[];
  gatedSegments: number;
}

export class Checkpoints {
  /** The latest checkpoint, recorded or on its way. */
  latest: Partial | null;
  readonly lost = new AbortController();
  private writing = Promise.resolve();
  private queued = false;

  constructor(
    private readonly job: { id: string; partial: string | null },
    private readonly owner: string,
    private readonly store: Pick<JobStore, 'progress'>,
    private readonly logger: Logger,
  ) {
    // A partial from before checkpoints (pieces: no `resume`) is not resumable: such a job starts over.
    const stored = job.partial ? (JSON.parse(job.partial) as Partial) : null;
    this.latest = stored?.resume ? stored : null;
  }

  /** The engine's next checkpoint: `segments` and `gated` are what came since the one before. */
  add(resume: ResumePoint, segments: Segment[], gated: number): void {
    this.latest = { resume, segments: [...(this.latest?.segments ?? []), ...segments], gatedSegments: (this.latest?.gatedSegments ?? 0) + gated };
    if (this.queued) return;
    this.queued = true;
    this.writing = this.writing.then(async () => {
      this.queued = false;
      const point = this.latest!;
      if (!(await this.store.progress(this.job.id, this.owner, point.resume.seconds, JSON.stringify(point)))) this.lost.abort();
    }).catch((err) => this.logger.warn({ jobId: this.job.id, err: (err as Error).message }, 'could not record a job\'s progress'));
  }

  /** Forgets them all (made by another model or settings), in the row too: the job starts over. */
  async clear(): Promise<void> {
    await this.written();
    this.latest = null;
    if (!(await this.store.progress(this.job.id, this.owner, 0, null))) this.lost.abort();
  }

  /** Settles once every checkpoint so far is written (or failed to be). */
  written(): Promise<void> {
    return this.writing;
  }
}
