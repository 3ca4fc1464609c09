// A job as the jobs API shows it: to its key (GET /v1/audio/jobs/{id}) and
// in the body of its callback; and as the host sees it in a list
// (GET /admin/jobs, `npm run admin -- jobs list`).
import type { JobSummary } from '../admin-api';
import type { Job } from '../store/jobs';
import type { JobForm } from './runner';

const seconds = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));

/** A job as its key sees it: the answer once done, the error envelope once failed. */
export function jobView(job: Job) {
  const form = JSON.parse(job.form) as JobForm;
  return {
    id: job.id,
    object: 'audio.job',
    status: job.status,
    created_at: seconds(job.createdAt)!,
    started_at: seconds(job.startedAt),
    finished_at: seconds(job.finishedAt),
    response_format: form.format,
    progress: { seconds_done: Math.round(job.secondsDone * 100) / 100, seconds_total: Math.round(job.secondsTotal * 100) / 100 },
    // waiting: the job has not ended; not_sent: it was cancelled (a cancelled job is not called back).
    ...(job.callbackUrl !== null && { callback_url: job.callbackUrl, callback_status: job.callbackState ?? (job.status === 'cancelled' ? 'not_sent' : 'waiting') }),
    ...(job.status === 'done' && job.result !== null && { result: JSON.parse(job.result) as unknown }),
    ...(job.status === 'failed' && job.error !== null && { error: (JSON.parse(job.error) as { error: unknown }).error }),
  };
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** A job in the host's lists: no form, answer nor recording, the error's code only. */
export function jobSummary(j: Job): JobSummary {
  return {
    id: j.id, keyId: j.keyId, status: j.status, secondsDone: j.secondsDone, secondsTotal: j.secondsTotal, createdAt: iso(j.createdAt)!, finishedAt: iso(j.finishedAt),
    callbackStatus: j.callbackState, errorCode: j.error === null ? null : (JSON.parse(j.error) as { error: { code: string } }).error.code,
  };
}
