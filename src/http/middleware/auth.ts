// Bearer authentication for the two scopes. External API keys work only on
// /v1/*, the admin key only on /admin/*.
import type { Context, Next } from 'koa';
import { unauthorized } from '../errors';
import type { ApiKeyStore } from '../../store/api-keys';
import { adminKeyMatches } from '../../store/admin-key';
import { markAuthenticated } from '../connections';

function bearer(ctx: Context): string | null {
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(ctx.get('Authorization'));
  return m ? m[1] : null;
}

export function requireApiKey(keys: ApiKeyStore) {
  return async function authenticateApiKey(ctx: Context, next: Next): Promise<void> {
    const token = bearer(ctx);
    const record = token ? await keys.verify(token) : null;
    if (!record) throw unauthorized(token ? 'Invalid or revoked API key.' : 'Missing bearer token.');
    ctx.state.apiKeyId = record.id;
    ctx.state.apiKey = record;
    markAuthenticated(ctx.req.socket);
    await next();
  };
}

export function requireAdminKey(adminKey: string) {
  return async function authenticateAdmin(ctx: Context, next: Next): Promise<void> {
    const token = bearer(ctx);
    if (!token || !adminKeyMatches(adminKey, token)) throw unauthorized(token ? 'Invalid admin key.' : 'Missing bearer token.');
    markAuthenticated(ctx.req.socket);
    await next();
  };
}
