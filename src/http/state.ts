// What middleware and handlers tell each other about one request, typed in
// one place (Koa's ctx.state is `any`): every access goes through stateOf().
import type { z } from 'zod';
import type { ApiKeyRecord } from '../store/api-keys';

export interface RequestState {
  /** request-log: the X-Request-Id, given or made. */
  requestId?: string;
  /** client-gone / the error envelope: the client closed the connection. */
  clientGone?: boolean;
  /** client-gone: aborts when the client leaves. */
  clientSignal?: AbortSignal;
  /** auth: the API key that authenticated the request (/v1 only). */
  apiKey?: ApiKeyRecord;
  /** key-limits: charges audio seconds against the key's budget, or throws 429. */
  admitAudio?: (seconds: number) => Promise<void>;
  /** The handler: audio seconds served, counted in the key's usage. */
  transcribedSeconds?: number;
  /** The error envelope or the stream: the error code answered, for the log and the usage. */
  errorCode?: string;
  /** The handler, for the log and Server-Timing. */
  audioSeconds?: number;
  /** What the upload was, as decoded: "webm/opus", "wav/pcm_s16". */
  audioFormat?: string;
  decodeMs?: number;
  queueMs?: number;
  sttMs?: number;
  runtime?: string;
  /** The local scheduler's compute threads for the job, and the decoder's share of them (they follow the free cores). */
  threads?: number;
  decoderThreads?: number;
  /** validate: the JSON body, parsed by the route's zod schema (read with bodyOf). */
  body?: unknown;
}

export const stateOf = (ctx: { state: unknown }): RequestState => ctx.state as RequestState;

/** The body validate() parsed with `schema` (the same schema the route was given). */
export const bodyOf = <S extends z.ZodType>(ctx: { state: unknown }, _schema: S): z.infer<S> => stateOf(ctx).body as z.infer<S>;
