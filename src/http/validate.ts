// JSON body validation with zod: the first problem becomes a 400 that names
// the field (unknown fields included), so nothing is half-applied.
import type { Context, Next } from 'koa';
import { koaBody } from 'koa-body';
import { z } from 'zod';
import { ApiError, badRequest } from './api-error';
import { stateOf } from './state';

export function parseWith<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (issue.code === 'unrecognized_keys') {
    const field = [...issue.path, issue.keys[0]].join('.');
    throw badRequest('unknown_parameter', `Unknown field "${field}".`, field);
  }
  const field = issue.path.join('.') || null;
  throw badRequest('invalid_value', field ? `Invalid "${field}": ${issue.message}.` : `Invalid body: ${issue.message}.`, field);
}

const parseJson = koaBody({ json: true, jsonStrict: true, jsonLimit: '64kb', multipart: false, urlencoded: false, text: false });

/** Parses a JSON body (an empty body counts as {}) and validates it into stateOf(ctx).body. */
export function jsonBody<T>(schema: z.ZodType<T>) {
  return async function validateJsonBody(ctx: Context, next: Next): Promise<void> {
    const hasBody = Number(ctx.get('Content-Length') || 0) > 0 || ctx.get('Transfer-Encoding') !== '';
    if (hasBody) {
      if (!ctx.is('application/json')) throw new ApiError(415, 'unsupported_media_type', 'Send a JSON body (Content-Type: application/json).');
      try {
        await parseJson(ctx, async () => {});
      } catch (err) {
        const status = (err as { status?: number }).status;
        if (status === 413) throw new ApiError(413, 'body_too_large', 'The JSON body is too large.');
        throw badRequest('invalid_json', 'The body is not valid JSON.');
      }
    }
    stateOf(ctx).body = parseWith(schema, hasBody ? ctx.request.body : {});
    await next();
  };
}
