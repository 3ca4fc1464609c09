// The one table from what went wrong to the HTTP answer: domain errors
// (src/domain-errors.ts) by class, then the framework's own (formidable's size
// limits, @koa/router's 405/501, koa's http-errors). Anything else is a 500
// whose detail stays in the log.
import type { Context } from 'koa';
import { AbortedError, BackendError, BusyError, ConflictError, InvalidInputError, NotFoundError, OverShareError, type SttError } from '../domain-errors';
import { ApiError, badRequest } from './api-error';
import type { WavError } from '../native';
import type { Logger } from '../log';

const DOMAIN_STATUS: [abstract new (...args: never[]) => SttError, number][] = [
  [InvalidInputError, 400],
  [NotFoundError, 404],
  [ConflictError, 409],
  [OverShareError, 429],
  [BackendError, 502],
  [BusyError, 503],
];

export const CLIENT_CLOSED = 499;

/** The ApiError for one of ours (an ApiError, a domain error, an abort); null for anything else. */
export function knownApiError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err;
  if (err instanceof AbortedError) return new ApiError(CLIENT_CLOSED, 'client_closed_request', 'The client closed the request.');
  for (const [kind, status] of DOMAIN_STATUS) {
    if (!(err instanceof kind)) continue;
    const headers: Record<string, string> = err instanceof BusyError || err instanceof OverShareError
      ? { 'Retry-After': String(Math.max(1, Math.ceil(err.retryAfterSeconds))) }
      : {};
    return new ApiError(status, err.code, err.message, err.param, headers);
  }
  return null;
}

/**
 * What a client is told when its upload cannot be decoded. A codec or
 * container this server does not decode, a stream that is damaged, and audio
 * over the length limit each have their own code; the rest is invalid_audio
 * with the decoder's stable code. The decoders' own messages describe the
 * file (they name the container and codec found) and are safe to show;
 * anything else (an allocation failure, say) is a fixed sentence, with the
 * detail in the log.
 */
export function invalidAudio(e: WavError, logger: Logger): ApiError {
  switch (e.code) {
    case 'unsupported_codec':
      return badRequest('unsupported_codec', `The audio is in a format this server does not decode: ${e.message}.`, 'file');
    case 'corrupt_audio':
      return badRequest('corrupt_audio', `The audio could not be decoded: ${e.message}.`, 'file');
    case 'audio_too_long':
      return badRequest('audio_too_long', `The audio is longer than this server accepts per request (${e.message}).`, 'file');
    case 'decode_failed':
      logger.warn({ err: e.message }, 'audio decoding failed');
      return badRequest('invalid_audio', 'The file is not usable audio (decode_failed): it could not be decoded.', 'file');
    default:
      return badRequest('invalid_audio', `The file is not usable audio (${e.code}): ${e.message}.`, 'file');
  }
}

/** An ApiError for anything thrown; `internal` is true when it is a 500 the log must explain. */
export function toApiError(err: unknown, ctx: Context): { api: ApiError; internal: boolean } {
  const known = knownApiError(err);
  if (known) return { api: known, internal: false };
  const e = err as { status?: number; httpCode?: number; expose?: boolean; message?: string };
  // formidable's errors carry an httpCode; 413 for every size limit.
  if (typeof e.httpCode === 'number') {
    return {
      api: e.httpCode === 413
        ? new ApiError(413, 'file_too_large', 'The upload is larger than this server accepts.', 'file')
        : new ApiError(400, 'invalid_multipart', 'The multipart/form-data body could not be parsed.'),
      internal: false,
    };
  }
  // @koa/router says 501 for a method it has no name for (TRACE, PROPFIND): on a
  // path that exists that is still a method the resource does not allow.
  if (e.status === 405 || (e.status === 501 && allowedMethods(ctx))) {
    return { api: new ApiError(405, 'method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}.`, null, { Allow: allowedMethods(ctx) }), internal: false };
  }
  if (e.status === 501) return { api: new ApiError(501, 'not_implemented', `${ctx.method} is not a method this server implements.`), internal: false };
  if (e.status && e.status < 500 && e.expose) return { api: new ApiError(e.status, 'invalid_request', String(e.message)), internal: false };
  return { api: new ApiError(500, 'internal_error', 'Internal server error.'), internal: true };
}

/**
 * The methods the path has, for the Allow header a 405 must carry (RFC 9110):
 * @koa/router sets it only when it does not throw, and ours throw for the envelope.
 */
function allowedMethods(ctx: Context): string {
  const matched = (ctx as Context & { matched?: { methods: string[] }[] }).matched ?? [];
  return [...new Set(matched.flatMap((layer) => layer.methods))].join(', ');
}
