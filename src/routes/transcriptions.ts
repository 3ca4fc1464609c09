// POST /v1/audio/transcriptions (and /translations): auth → upload → one
// reading of the routing → the form → WAV header (length, budget) → the plan
// (local, cloud or spill) → room → WAV decoding → the backend → format.
import Router from '@koa/router';
import type { Context } from 'koa';
import { WavError } from '../native';
import { badRequest, ApiError, unavailable } from '../http/api-error';
import { multipartUpload, releaseUpload } from '../http/middleware/upload';
import { watchClient } from '../http/middleware/client-gone';
import { AbortedError, OverShareError } from '../domain-errors';
import { render, tokenLogprobs, usage } from '../stt/formats';
import { invalidAudio, toApiError } from '../http/error-map';
import { TranscriptStream } from '../http/transcript-stream';
import { deadline } from '../net/deadline';
import { readWavHeader } from '../stt/wav-header';
import { decodeUpload } from '../stt/decode-upload';
import type { Services } from '../services';
import type { Task } from '../stt/capabilities';
import { plan } from '../stt/plan';
import { keyShareMessage } from '../stt/local/engine';
import { parseTranscriptionRequest } from './transcription-request';
import { stateOf } from '../http/state';
import { headerSafe } from '../http/header-safe';

function refuseTooLong(seconds: number, maxSeconds: number): void {
  if (seconds <= maxSeconds) return;
  throw badRequest('audio_too_long', `The audio is ${Math.ceil(seconds)} s long; this server accepts at most ${maxSeconds} s per request.`, 'file');
}

/**
 * 429 key_queue_full (the key holds its share of the queue) or 503
 * queue_full (the queue is full) before the upload is decoded: a request
 * that would be refused spends no memory on its PCM.
 */
function refuseWhenFull(s: TranscriptionRouteParts, mode: 'local' | 'cloud', keyId: string): void {
  if (mode === 'cloud') return s.cloud.refuseIfBusy();
  const scheduler = s.local.scheduler;
  // The engine's refusal, early: the error map makes it the same 429 with Retry-After.
  if (scheduler.isOwnerFull(keyId)) throw new OverShareError('key_queue_full', keyShareMessage(scheduler.stats().ownerCapacity), scheduler.estimatedWaitSeconds());
  if (scheduler.isFull()) throw unavailable('queue_full', 'The local transcription queue is full; retry later.', scheduler.estimatedWaitSeconds());
}

/** stt_aborts_total: a job stopped because its client left, its deadline passed or the server shut down. */
function countAbort(ctx: Context, s: TranscriptionRouteParts, signal: AbortSignal): void {
  if (!signal.aborted && !s.shuttingDown.signal.aborted) return;
  const reason = stateOf(ctx).clientGone ? 'client' : s.shuttingDown.signal.aborted ? 'shutdown' : 'deadline';
  s.metrics.aborts.inc({ reason });
}

/** What a client is told when its job stopped early: the server's shutdown and the deadline by name. */
function whyStopped(err: unknown, ctx: Context, s: TranscriptionRouteParts, signal: AbortSignal): unknown {
  if (s.shuttingDown.signal.aborted && !stateOf(ctx).clientGone) {
    return unavailable('shutting_down', 'The server is shutting down; retry shortly or on another instance.', 1);
  }
  if (signal.aborted && !stateOf(ctx).clientGone) {
    return new ApiError(504, 'deadline_exceeded', 'Transcription did not finish within the deadline for this audio length.');
  }
  return err;
}

/**
 * Where a request's time went (decode includes the wait for a decode slot;
 * queue is local only), so a client or benchmark can tell waiting from work.
 * A streamed answer's headers go out before these are known: none there.
 */
function serverTiming(state: { decodeMs?: number; queueMs?: number; sttMs?: number }): string {
  const parts: [string, number | undefined][] = [['decode', state.decodeMs], ['queue', state.queueMs], ['stt', state.sttMs]];
  return parts.filter(([, ms]) => ms !== undefined).map(([name, ms]) => `${name};dur=${ms!.toFixed(1)}`).join(', ');
}

export type TranscriptionRouteParts = Pick<Services, 'stt' | 'local' | 'cloud' | 'logger' | 'shuttingDown' | 'metrics' | 'keyLimiter' | 'decodeSlots'> & {
  config: Pick<Services['config'], 'maxUploadBytes' | 'maxAudioSeconds' | 'deadlineBaseMs' | 'deadlinePerAudioSecondMs'>;
};

/** Under the /v1 router, whose guard checks the API key first. */
export function transcriptionRoutes(v1: Router, s: TranscriptionRouteParts): void {
  const decodeSlots = s.decodeSlots;
  // Transcriptions and translations differ in the fields they take and the task only.
  const handle = (task: Task) =>
    async function transcribe(ctx: Context) {
      const state = stateOf(ctx);
      const clientSignal = state.clientSignal!;
      const key = state.apiKey!;
      const route = await s.stt.route();
      const req = parseTranscriptionRequest(ctx.request.body as Record<string, unknown>, (ctx.request.files ?? {}) as Record<string, unknown>, route.target, task);
      if (route.target.mode === 'cloud' && key.localOnly) {
        throw new ApiError(403, 'local_only_key', 'This API key\'s audio may not leave the host, and this server sends transcriptions to a cloud provider.');
      }
      const header = readWavHeader(req.file.buffer);
      if (header) refuseTooLong(header.durationSeconds, s.config.maxAudioSeconds);
      const admitAudio = state.admitAudio!;
      // A WAV's header says how long it is; other formats are charged once decoded, but a key with nothing left stops here.
      await admitAudio(header ? header.durationSeconds : 0);
      const where = await plan(route, req, { localOnly: key.localOnly, keyId: key.id }, s);
      if (where.where === 'spill') ctx.set({ 'X-Stt-Runtime': headerSafe(`${where.cloud.providerId}/${where.cloud.model}`), 'X-Stt-Spilled': where.reason });
      else refuseWhenFull(s, where.where, key.id);
      const cloud = where.where === 'local' ? null : where.cloud;
      const decodeStarted = performance.now(); // decodeMs includes the wait for a decode slot
      // A provider gets the audio as measured (the upload, or a WAV's measured chunks): keep only its duration, not the PCM, while the call lasts.
      const { pcm, forward, durationSeconds, container, codec } = await decodeUpload(req.file.buffer, { header, mode: cloud ? 'cloud' : 'local', slots: decodeSlots, signal: clientSignal, maxSeconds: s.config.maxAudioSeconds })
        .catch((err) => {
          throw err instanceof WavError ? invalidAudio(err, s.logger) : err;
        });
      state.audioSeconds = Math.round(durationSeconds * 100) / 100;
      state.audioFormat = `${container}/${codec}`;
      state.decodeMs = performance.now() - decodeStarted;
      // Decoding cannot be stopped part-way; a client that left meanwhile gets no job.
      if (clientSignal.aborted) throw new AbortedError();
      refuseTooLong(durationSeconds, s.config.maxAudioSeconds); // a header only the decoder could read
      // What the header did not announce (no header, or one the decoder read differently) is admitted now.
      const unannounced = durationSeconds - (header?.durationSeconds ?? 0);
      if (unannounced > 0) await admitAudio(unannounced);
      // The local runtime needs only the PCM, a provider sent a rebuilt WAV only that: let go of the upload now, not when the job ends.
      if (pcm || forward !== req.file.buffer) releaseUpload(ctx, req.file);

      const due = deadline(s.config.deadlineBaseMs + durationSeconds * s.config.deadlinePerAudioSecondMs);
      const signal = AbortSignal.any([clientSignal, due.signal]);
      const stream = req.stream ? new TranscriptStream(ctx) : null;
      let out;
      const sttStarted = performance.now();
      try {
        out = await s.stt.transcribe({
          task: req.task,
          pcm,
          durationSeconds,
          signal,
          wav: forward,
          // Named by what the bytes are, never by the client's name: providers pick their decoder by the extension.
          filename: `audio.${container}`,
          format: req.format,
          language: req.language,
          prompt: req.prompt,
          temperature: req.temperature,
          granularities: req.granularities,
          logprobs: req.logprobs,
          chunkingStrategy: req.chunkingStrategy,
          onText: stream ? (text) => stream.text(text) : undefined,
          owner: key.id,
          // Charged from when the work begins: a client that leaves just before its answer has used it.
          onStart: () => (state.transcribedSeconds = durationSeconds),
          cloud,
        });
      } catch (err) {
        // Work begun is charged only when the client left or the deadline passed: a failure of ours,
        // the provider's or a shutdown is not the key's doing.
        if (!state.clientGone && !due.signal.aborted) state.transcribedSeconds = undefined;
        countAbort(ctx, s, signal);
        const failure = whyStopped(err, ctx, s, signal);
        if (!stream?.hasStarted) throw failure;
        // The status line has gone out: the error goes as the stream's last event,
        // and the audio counts as used (the client may have read nearly all of it).
        state.transcribedSeconds = durationSeconds;
        const { api, internal } = toApiError(failure, ctx);
        if (internal) s.logger.error({ requestId: state.requestId, err: (failure as Error).message }, 'streamed transcription failed');
        stream.fail(api);
        return;
      } finally {
        due.clear();
      }
      state.runtime = out.runtime;
      state.queueMs = out.queueMs;
      state.threads = out.threads;
      state.decoderThreads = out.decoderThreads;
      state.sttMs = performance.now() - sttStarted;
      state.transcribedSeconds = durationSeconds;
      s.metrics.recordTranscription(out.runtime, { decodeMs: state.decodeMs!, queueMs: out.queueMs, sttMs: state.sttMs!, audioSeconds: durationSeconds });
      if (stream) {
        stream.done(out.result.text.trim(), usage(out.result), req.logprobs ? tokenLogprobs(out.result) : undefined);
        return;
      }
      ctx.set({ 'Server-Timing': serverTiming(ctx.state), 'X-Stt-Runtime': headerSafe(out.runtime) });
      const { body, type } = render(out.result, req.format, { task: req.task, granularities: req.granularities, temperature: req.temperature ?? 0, logprobs: req.logprobs });
      ctx.type = type;
      ctx.body = body;
    };
  for (const [path, task] of [['/audio/transcriptions', 'transcribe'], ['/audio/translations', 'translate']] as const) {
    v1.post(path, watchClient(), s.keyLimiter.middleware(), multipartUpload(s.config.maxUploadBytes), handle(task));
  }
}
