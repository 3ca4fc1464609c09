// First in the chain: turns anything thrown into the contract's error
// envelope. Internal details go to the log, never to the client.
import type { Context, Next } from 'koa';
import { ApiError } from '../errors';
import { AbortedError } from '../../stt/local/scheduler';
import type { Logger } from '../../log';
import { closeAfterDiscardingBody, type LingerLimits } from '../linger';

/** formidable's errors carry an httpCode; 413 for every size limit. */
function fromUploadError(err: { httpCode?: number; code?: number; message: string }): ApiError | null {
  if (typeof err.httpCode !== 'number') return null;
  if (err.httpCode === 413) return new ApiError(413, 'file_too_large', 'The upload is larger than this server accepts.', 'file');
  return new ApiError(400, 'invalid_multipart', 'The multipart/form-data body could not be parsed.');
}

/**
 * The methods the path has, for the Allow header a 405 must carry (RFC 9110):
 * @koa/router sets it only when it does not throw, and ours throw for the envelope.
 */
function allowedMethods(ctx: Context): string {
  const matched = (ctx as Context & { matched?: { methods: string[] }[] }).matched ?? [];
  return [...new Set(matched.flatMap((layer) => layer.methods))].join(', ');
}

export function errorHandler(logger: Logger, linger: LingerLimits) {
  return async function handleErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new ApiError(404, 'not_found', `No route for ${ctx.method} ${ctx.path}.`);
      }
    } catch (thrown) {
      const err = thrown as Error & { status?: number; httpCode?: number; expose?: boolean };
      let api: ApiError;
      if (err instanceof ApiError) api = err;
      else if (err instanceof AbortedError) {
        ctx.state.clientGone = true;
        api = new ApiError(499, 'client_closed_request', 'The client closed the request.');
      } else {
        api =
          fromUploadError(err) ??
          (err.status === 405
            ? new ApiError(405, 'method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}.`, null, { Allow: allowedMethods(ctx) })
            : err.status === 501
              ? new ApiError(501, 'not_implemented', `${ctx.method} is not a method this server implements.`)
            : err.status && err.status < 500 && err.expose
              ? new ApiError(err.status, 'invalid_request', err.message)
              : new ApiError(500, 'internal_error', 'Internal server error.'));
        if (api.status >= 500 && api.status !== 501) logger.error({ requestId: ctx.state.requestId, err: err.message, stack: err.stack }, 'unhandled error');
      }
      ctx.state.errorCode = api.code;
      ctx.status = api.status;
      ctx.set(api.headers);
      // The body may still be streaming in (an oversize upload, a 401 on one):
      // discard the rest, bounded, so the client reads this answer, then close.
      if (!ctx.state.clientGone) closeAfterDiscardingBody(ctx.req, ctx.res, linger);
      ctx.body = api.toBody();
    }
  };
}
