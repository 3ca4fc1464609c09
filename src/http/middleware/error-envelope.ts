// First in the chain: turns anything thrown into the contract's error
// envelope (the mapping is src/http/error-map.ts). Internal details go to the
// log, never to the client.
import type { Context, Next } from 'koa';
import { ApiError } from '../api-error';
import { CLIENT_CLOSED, toApiError } from '../error-map';
import type { Logger } from '../../log';
import { closeAfterDiscardingBody, type LingerLimits } from '../linger';
import { stateOf } from '../state';

export function errorHandler(logger: Logger, linger: LingerLimits) {
  return async function handleErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new ApiError(404, 'not_found', `No route for ${ctx.method} ${ctx.path}.`);
      }
    } catch (thrown) {
      const { api, internal } = toApiError(thrown, ctx);
      if (internal) logger.error({ requestId: stateOf(ctx).requestId, err: (thrown as Error).message, stack: (thrown as Error).stack }, 'unhandled error');
      if (api.status === CLIENT_CLOSED) stateOf(ctx).clientGone = true;
      stateOf(ctx).errorCode = api.code;
      ctx.status = api.status;
      ctx.set(api.headers);
      // The body may still be streaming in (an oversize upload, a 401 on one):
      // discard the rest, bounded, so the client reads this answer, then close.
      if (!stateOf(ctx).clientGone) closeAfterDiscardingBody(ctx.req, ctx.res, linger);
      ctx.body = api.toBody();
    }
  };
}
