// Refuses requests whose Host header names a host this server was not told
// it is (STT_ALLOWED_HOSTS). A web page can make a browser send requests to
// 127.0.0.1 by rebinding its own DNS name to it; the browser then still sends
// that name as Host, so checking Host closes the door on DNS rebinding.
import type { Context, Next } from 'koa';
import { ApiError } from '../api-error';

/** The name part of a Host header: "[::1]:8080" → "::1", "Example.com.:80" → "example.com". */
export function hostName(header: string): string {
  const h = header.trim().toLowerCase();
  const name = h.startsWith('[') ? h.slice(1, h.indexOf(']')) : h.replace(/:\d*$/, '');
  return name.replace(/\.$/, '');
}

export function hostAllowed(allowed: readonly string[], name: string): boolean {
  return allowed.some((a) => (a.startsWith('.') ? name === a.slice(1) || name.endsWith(a) : name === a));
}

export function allowedHost(allowed: readonly string[] | null) {
  return async function checkHost(ctx: Context, next: Next): Promise<void> {
    if (allowed !== null) {
      const header = ctx.get('Host');
      if (!header || !hostAllowed(allowed, hostName(header))) {
        throw new ApiError(403, 'host_not_allowed', 'This server does not answer for that Host; see STT_ALLOWED_HOSTS.');
      }
    }
    await next();
  };
}
