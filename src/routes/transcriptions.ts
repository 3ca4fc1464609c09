// POST /v1/audio/transcriptions: auth → upload → fields → WAV → runtime → format.
import Router from '@koa/router';
import type { Context } from 'koa';
import { decodeWav, type WavError } from '../native';
import { badRequest, ApiError } from '../http/errors';
import { multipartUpload } from '../http/middleware/upload';
import { render } from '../stt/formats';
import type { Services } from '../services';
import { parseTranscriptionRequest } from './transcription-request';

/** Abort when the client goes away before the response is written. */
function clientAbortSignal(ctx: Context): AbortSignal {
  const controller = new AbortController();
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) {
      ctx.state.clientGone = true;
      controller.abort();
    }
  });
  return controller.signal;
}

/** Under the /v1 router, whose guard checks the API key first. */
export function transcriptionRoutes(v1: Router, s: Services): void {
  v1.post(
    '/audio/transcriptions',
    multipartUpload(s.config.maxUploadBytes),
    async function transcribe(ctx: Context) {
      const target = await s.stt.target();
      const req = parseTranscriptionRequest(
        ctx.request.body as Record<string, unknown>,
        (ctx.request.files ?? {}) as Record<string, unknown>,
        target,
      );
      let audio;
      const decodeStarted = performance.now();
      try {
        audio = await decodeWav(req.file.buffer);
      } catch (err) {
        const e = err as WavError;
        throw badRequest('invalid_audio', `The file is not a usable WAV file (${e.code ?? 'unreadable'}): ${e.message}.`, 'file');
      }
      ctx.state.audioSeconds = Math.round(audio.durationSeconds * 100) / 100;
      ctx.state.decodeMs = performance.now() - decodeStarted;

      const signal = AbortSignal.any([
        clientAbortSignal(ctx),
        AbortSignal.timeout(s.config.deadlineBaseMs + audio.durationSeconds * s.config.deadlinePerAudioSecondMs),
      ]);
      let out;
      const sttStarted = performance.now();
      try {
        out = await s.stt.transcribe({
          pcm: audio.pcm,
          durationSeconds: audio.durationSeconds,
          signal,
          wav: req.file.buffer,
          filename: req.file.originalFilename || 'audio.wav',
          format: req.format,
          language: req.language,
          prompt: req.prompt,
          temperature: req.temperature,
          granularities: req.granularities,
        });
      } catch (err) {
        if (signal.aborted && !ctx.state.clientGone) {
          throw new ApiError(504, 'deadline_exceeded', 'Transcription did not finish within the deadline for this audio length.');
        }
        throw err;
      }
      ctx.state.runtime = out.runtime;
      ctx.state.queueMs = out.queueMs;
      ctx.state.sttMs = performance.now() - sttStarted;
      const { body, type } = render(out.result, req.format, { granularities: req.granularities, temperature: req.temperature ?? 0 });
      ctx.type = type;
      ctx.body = body;
    },
  );
}
