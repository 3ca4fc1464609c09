// The jobs API (docs/api.md, "Jobs: long recordings"), under the /v1 router's API-key guard:
// POST /v1/audio/jobs spools the upload, checks it decodes, records the job
// and answers 202 at once; GET /v1/audio/jobs/{id} and GET /v1/audio/jobs
// show a key its own jobs (another key's are as absent as missing ones);
// DELETE /v1/audio/jobs/{id} cancels a job or removes an ended one, and its
// recording with it; GET /v1/audio/job-callbacks/secret gives the key the
// secret its callbacks are signed with. src/jobs/runner.ts does the work,
// src/jobs/callbacks.ts the callbacks.
import { randomUUID } from 'node:crypto';
import { rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { WavError } from '../native';
import { decodeSpooled } from '../jobs/spooled-audio';
import { ApiError, badRequest, notFound } from '../http/api-error';
import { invalidAudio } from '../http/error-map';
import { spoolUpload } from '../http/middleware/upload';
import { watchClient } from '../http/middleware/client-gone';
import { stateOf } from '../http/state';
import type { JobStore } from '../store/jobs';
import { jobView } from '../jobs/view';
import { cancelOrRemove } from '../jobs/cancel';
import type { JobForm, JobRunner } from '../jobs/runner';
import type { CallbackSender } from '../jobs/callbacks';
import type { Services } from '../services';
import { AbortedError, BackendError } from '../domain-errors';
import { parseTranscriptionRequest } from './transcription-request';
import { freeBytes, spoolHasRoom, uploadBound } from '../jobs/spool-space';

/** Jobs a list answer holds at most. */
const PAGE = 50;

export type JobRouteParts = Pick<Services, 'stt' | 'keyLimiter' | 'logger' | 'decodeSlots'> & {
  jobs: { store: JobStore; runner: JobRunner; spoolDir: string; callbacks: CallbackSender };
  config: Pick<Services['config'], 'maxJobUploadBytes' | 'maxJobAudioSeconds' | 'maxJobsPerKey' | 'spoolMinFreeBytes'>;
};

const spoolFull = () =>
  new ApiError(503, 'spool_full', 'The disk that holds job recordings is too full to take another upload now; try again later.', null, { 'Retry-After': '60' });

const tooManyJobs = (cap: number) =>
  new ApiError(429, 'too_many_jobs', `This key has ${cap} jobs queued, running or calling back, as many as it may; wait for one to end or cancel one.`, null, { 'Retry-After': '60' });

/** The file part as the spool parser left it. */
function spooledFile(ctx: Context): string {
  const file = (ctx.request.files ?? {}).file as { spoolPath?: string } | undefined;
  if (!file?.spoolPath) throw new Error('the spool parser left no file path');
  return file.spoolPath;
}

/**
 * The form's fields as a transcription takes them, but for stream and
 * include[] (a job's answer is fetched whole), and its callback URL.
 */
function parseJobForm(ctx: Context, target: Parameters<typeof parseTranscriptionRequest>[2], callbacks: CallbackSender): { form: JobForm; callbackUrl: string | null } {
  const { callback_url: callbackUrl, ...fields } = ctx.request.body as Record<string, unknown>;
  for (const name of ['stream', 'include[]', 'include']) {
    if (fields[name] !== undefined) throw badRequest('unsupported_parameter', `${name} does not apply to a job: its answer is fetched whole with GET /v1/audio/jobs/{id}.`, name);
  }
  const req = parseTranscriptionRequest(fields, (ctx.request.files ?? {}) as Record<string, unknown>, target);
  if (callbackUrl !== undefined && typeof callbackUrl !== 'string') throw badRequest('invalid_type', 'callback_url must be one text field.', 'callback_url');
  const problem = callbackUrl ? callbacks.urlProblem(callbackUrl) : null;
  if (problem) throw badRequest('invalid_value', `callback_url: ${problem}.`, 'callback_url');
  const form: JobForm = {
    task: req.task, format: req.format, language: req.language, prompt: req.prompt, temperature: req.temperature,
    granularities: [...req.granularities], chunkingStrategy: req.chunkingStrategy,
  };
  return { form, callbackUrl: callbackUrl || null };
}

export function jobRoutes(v1: Router, s: JobRouteParts): void {
  const { store, runner, spoolDir } = s.jobs;
  /** Job uploads arriving in this process, by key id. */
  const uploading = new Map<string, number>();
  /** Each submission's place among them, let go once its job is recorded (then unfinished() counts it) or it ends. */
  const places = new WeakMap<Context, () => void>();

  /**
   * The key's job cap, checked before its upload is spooled: a key at its cap
   * writes nothing to disk, however many uploads it starts at once (those
   * still arriving count). The handler checks again once the job is recorded,
   * for submissions through other replicas.
   */
  async function roomForAJob(ctx: Context, next: () => Promise<unknown>) {
    const keyId = stateOf(ctx).apiKey!.id;
    const arriving = uploading.get(keyId) ?? 0;
    uploading.set(keyId, arriving + 1); // before the await, so uploads starting together see each other
    let held = true;
    const letGo = () => {
      if (!held) return;
      held = false;
      const left = (uploading.get(keyId) ?? 1) - 1;
      if (left > 0) uploading.set(keyId, left);
      else uploading.delete(keyId);
    };
    places.set(ctx, letGo);
    try {
      if ((await store.unfinished(keyId)) + arriving >= s.config.maxJobsPerKey) throw tooManyJobs(s.config.maxJobsPerKey);
      await next();
    } finally {
      letGo();
    }
  }

  /** Bytes reserved on the spool's disk for the job uploads arriving in this process (see uploadBound). */
  let reservedBytes = 0;
  /** All reservations ever let go: those let go while a free-space reading was made may not be in it. */
  let releasedBytes = 0;

  /**
   * Free space on the spool's disk for this upload and every other one
   * arriving in this process, each at the most it can write, with
   * STT_SPOOL_MIN_FREE_MB left over; checked before the upload is read. The
   * reservation is held to the end of the request: an upload already written
   * is then counted twice for a moment, which errs on the safe side.
   */
  async function roomOnDisk(ctx: Context, next: () => Promise<unknown>) {
    const bytes = uploadBound(ctx.request.length, Boolean(ctx.get('transfer-encoding')), s.config.maxJobUploadBytes);
    const releasedBefore = releasedBytes;
    const free = await freeBytes(spoolDir).catch((err: unknown) => {
      // The spool cannot be looked at (removed, unreadable, a stale mount): no upload goes there.
      s.logger.error({ spoolDir, err: (err as Error).message }, 'job upload refused: the spool\'s disk cannot be read');
      throw spoolFull();
    });
    // An upload that finished while the disk was read let its reservation go, though its last bytes may be
    // missing from the reading: it still counts here. No await between this check and the reservation, so
    // uploads checked together see each other's.
    const counted = reservedBytes + (releasedBytes - releasedBefore);
    if (!spoolHasRoom(free, counted, bytes, s.config.spoolMinFreeBytes)) {
      s.logger.warn({ spoolDir, freeBytes: free, reservedBytes: counted, uploadBytes: bytes, minFreeBytes: s.config.spoolMinFreeBytes }, 'job upload refused: the spool\'s disk is too full');
      throw spoolFull();
    }
    reservedBytes += bytes;
    try {
      await next();
    } finally {
      reservedBytes -= bytes;
      releasedBytes += bytes;
    }
  }

  v1.post('/audio/jobs', watchClient(), s.keyLimiter.middleware(), roomForAJob, roomOnDisk, spoolUpload(s.config.maxJobUploadBytes, spoolDir), async function submitJob(ctx: Context) {
    const state = stateOf(ctx);
    const key = state.apiKey!;
    const route = await s.stt.route();
    if (route.target.mode !== 'local') {
      throw new ApiError(409, 'local_runtime_required', 'Jobs run on the local runtime, and this server sends transcriptions to a cloud provider.');
    }
    const { form, callbackUrl } = parseJobForm(ctx, route.target, s.jobs.callbacks);
    if ((await store.unfinished(key.id)) >= s.config.maxJobsPerKey) throw tooManyJobs(s.config.maxJobsPerKey);
    const upload = spooledFile(ctx);
    // Decoded now so a file that cannot be read is a 400 here, not a failed job later; the samples are let go.
    let durationSeconds: number;
    try {
      durationSeconds = (await decodeSpooled(upload, s.decodeSlots, state.clientSignal, s.config.maxJobAudioSeconds)).durationSeconds;
    } catch (err) {
      if (!(err instanceof WavError)) throw err;
      if (err.code === 'audio_too_long') throw badRequest('audio_too_long', `The audio is longer than this server accepts per job (${s.config.maxJobAudioSeconds} s).`, 'file');
      throw invalidAudio(err, s.logger);
    }
    // A client that left while its upload was decoded gets no job.
    if (state.clientSignal!.aborted) throw new AbortedError();
    // A job waits for a model that is loading, but is not accepted for one that will never come (checked
    // where the transcription route meets the runtime: after the audio, so a bad file is a 400 first).
    const local = s.stt.local.status().state;
    if (local !== 'ready' && local !== 'loading') throw new BackendError('no_active_model', 'No local speech model is active. The host must activate one in /settings.');
    await state.admitAudio!(durationSeconds);
    const id = `job_${randomUUID().replaceAll('-', '')}`;
    const spool = path.join(spoolDir, id);
    await rename(upload, spool);
    places.get(ctx)?.(); // counted by unfinished() from here on, not twice
    try {
      const job = await store.create({ id, keyId: key.id, form: JSON.stringify(form), spool: id, secondsTotal: durationSeconds, callbackUrl });
      // Submissions that passed the check above together: the ones past the cap go again.
      if ((await store.unfinished(key.id)) > s.config.maxJobsPerKey) throw tooManyJobs(s.config.maxJobsPerKey);
      // Charged when accepted: the work is reserved for it from now.
      state.transcribedSeconds = durationSeconds;
      runner.wake();
      ctx.status = 202;
      ctx.set('Location', `/v1/audio/jobs/${id}`);
      ctx.body = jobView(job);
    } catch (err) {
      // The client is told the job was not taken: no row may stay behind to run (and fail on its missing
      // recording, and call back) for a job nobody was given an id for. Also when create() itself failed:
      // its insert may have been written before the error (a lost acknowledgement); for an id never written
      // these do nothing. Removed only once cancelled here: a job another replica has already run is left.
      const cancelled = await store.cancel(id).catch(() => undefined);
      runner.cancel(id); // the runner may have claimed it meanwhile
      if (cancelled) {
        await store.remove(id).catch((e: unknown) => s.logger.error({ jobId: id, err: (e as Error).message }, 'a refused job\'s row could not be removed'));
      }
      await rm(spool, { force: true });
      throw err;
    }
  });

  v1.get('/audio/jobs', async function listJobs(ctx: Context) {
    const key = stateOf(ctx).apiKey!;
    const after = typeof ctx.query.after === 'string' ? ctx.query.after : undefined;
    const last = after === undefined ? undefined : await store.position(after, key.id);
    if (after !== undefined && !last) throw badRequest('invalid_value', 'after must be the id of one of this key\'s jobs.', 'after');
    const jobs = await store.list(key.id, PAGE + 1, last);
    ctx.body = { object: 'list', data: jobs.slice(0, PAGE).map(jobView), has_more: jobs.length > PAGE };
  });

  const ownJob = async (ctx: Context) => {
    const job = await store.get(String(ctx.params.id), stateOf(ctx).apiKey!.id);
    if (!job) throw notFound('job_not_found', `No job "${ctx.params.id}" of this key.`, 'id');
    return job;
  };

  // A path of its own: under /audio/jobs/ it would also match /audio/jobs/:id, and share its methods.
  v1.get('/audio/job-callbacks/secret', async function callbackSecret(ctx: Context) {
    ctx.body = { object: 'audio.job.callback_secret', secret: s.jobs.callbacks.secretFor(stateOf(ctx).apiKey!.id) };
  });

  v1.get('/audio/jobs/:id', async function getJob(ctx: Context) {
    ctx.body = jobView(await ownJob(ctx));
  });

  v1.delete('/audio/jobs/:id', async function deleteJob(ctx: Context) {
    const job = await ownJob(ctx);
    if (!(await cancelOrRemove(store, spoolDir, job, (id) => runner.cancel(id)))) throw notFound('job_not_found', `No job "${job.id}" of this key.`, 'id');
    ctx.status = 204;
  });
}
