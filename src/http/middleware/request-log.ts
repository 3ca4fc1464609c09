// Gives every request an id (X-Request-Id) and writes one structured log line
// when it ends: status, duration (and for transcriptions where it went: WAV
// decoding, waiting in the local queue, speech-to-text), audio seconds,
// runtime and, for local jobs, the threads it ran on. Never keys, audio or transcripts. Counts it in
// stt_http_requests_total by the route's pattern (never the raw path: a
// scanner's random paths would make a series each).
import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { Logger } from '../../log';
import type { Metrics } from '../../metrics';
import { stateOf } from '../state';

const round = (ms: number | undefined) => (ms === undefined ? undefined : Math.round(ms * 10) / 10);

export function requestLog(logger: Logger, metrics?: Pick<Metrics, 'requests'>) {
  return async function logRequest(ctx: Context, next: Next): Promise<void> {
    const incoming = ctx.get('X-Request-Id');
    const requestId = /^[\w.-]{1,64}$/.test(incoming) ? incoming : randomUUID();
    stateOf(ctx).requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const clientGone = stateOf(ctx).clientGone === true;
      const status = clientGone ? 499 : ctx.status;
      const route = (ctx as Context & { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      metrics?.requests.inc({ route: String(route), method: ctx.method, status: String(status) });
      logger[ctx.status >= 500 ? 'error' : 'info']({
        requestId,
        method: ctx.method,
        path: ctx.path,
        status,
        durationMs: round(durationMs),
        decodeMs: round(stateOf(ctx).decodeMs),
        queueMs: round(stateOf(ctx).queueMs),
        sttMs: round(stateOf(ctx).sttMs),
        audioSeconds: stateOf(ctx).audioSeconds,
        audioFormat: stateOf(ctx).audioFormat,
        runtime: stateOf(ctx).runtime,
        threads: stateOf(ctx).threads,
        decoderThreads: stateOf(ctx).decoderThreads,
        errorCode: stateOf(ctx).errorCode,
      }, 'request');
    }
  };
}
