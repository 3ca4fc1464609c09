// An AbortSignal that fires when the client goes away before its answer is
// written, in stateOf(ctx).clientSignal. Armed before the body is read: armed
// after the WAV was decoded, the socket's 'close' had already passed for a
// client that left during the upload or the decoding, and its job was queued
// and ran for nobody.
import type { Context, Next } from 'koa';
import { stateOf } from '../state';

export function watchClient() {
  return async function armClientSignal(ctx: Context, next: Next): Promise<void> {
    const controller = new AbortController();
    const gone = () => {
      if (ctx.res.writableFinished) return;
      stateOf(ctx).clientGone = true;
      controller.abort();
    };
    if (ctx.req.socket.destroyed) gone(); // left while the key was being checked
    else ctx.res.once('close', gone);
    stateOf(ctx).clientSignal = controller.signal;
    await next();
  };
}
