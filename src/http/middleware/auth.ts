// Bearer authentication for the two scopes. External API keys work only on
// /v1/*, the admin key only on /admin/*.
import type { Context, Next } from 'koa';
import { ApiError, unauthorized } from '../api-error';
import type { ApiKeyRecord, ApiKeyStore } from '../../store/api-keys';
import { StoreBusyError, StoreUnavailableError } from '../../store/db';
import { adminKeyMatches } from '../../store/admin-key';
import { markAuthenticated } from '../connections';
import { stateOf } from '../state';

/** The token of an `Authorization: Bearer <token>` header. */
export function bearerToken(header: string | undefined): string | null {
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
  return m ? m[1] : null;
}

const bearer = (ctx: Context): string | null => bearerToken(ctx.get('Authorization'));

/**
 * A key a replica has not seen while the shared database is down or busy cannot be
 * checked: 500, not 503. nginx sends a 503 on to the next replica and counts
 * it against this one (deploy/nginx.conf); every replica shares the database,
 * so anyone sending made-up keys during an outage would take them all out of
 * the upstream. Clients retry a 500 as they do a 503.
 */
export async function verifyApiKey(keys: ApiKeyStore, token: string): Promise<ApiKeyRecord | null> {
  try {
    return await keys.verify(token);
  } catch (err) {
    if (err instanceof StoreUnavailableError || err instanceof StoreBusyError) throw new ApiError(500, err.code, err.message, null, { 'Retry-After': String(err.retryAfterSeconds) });
    throw err;
  }
}

export function requireApiKey(keys: ApiKeyStore) {
  return async function authenticateApiKey(ctx: Context, next: Next): Promise<void> {
    const token = bearer(ctx);
    const record = token ? await verifyApiKey(keys, token) : null;
    if (!record) throw unauthorized(token ? 'Invalid or revoked API key.' : 'Missing bearer token.');
    stateOf(ctx).apiKey = record;
    markAuthenticated(ctx.req.socket);
    await next();
  };
}

/** The admin key, or for a route that also takes it (GET /metrics) `alsoAccepted`. */
export function requireAdminKey(adminKey: string, alsoAccepted: string | null = null) {
  return async function authenticateAdmin(ctx: Context, next: Next): Promise<void> {
    const token = bearer(ctx);
    // Both compared whatever the first gives, in constant time: no timing says which one a token came close to.
    const matches = token !== null && [adminKeyMatches(adminKey, token), alsoAccepted !== null && adminKeyMatches(alsoAccepted, token)].some(Boolean);
    if (!matches) throw unauthorized(token ? 'Invalid admin key.' : 'Missing bearer token.');
    markAuthenticated(ctx.req.socket);
    await next();
  };
}
