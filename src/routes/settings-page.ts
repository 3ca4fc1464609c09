// GET /settings: the host settings page as static assets (ui/, compiled to
// dist/ui/ui/: the page's build reaches up to the src/admin-api.ts types it
// imports, so its root is the project's). No secrets in them; a strict CSP
// keeps anything but our own script and style from running.
import Router from '@koa/router';
import type { Context } from 'koa';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../package-root';
import { ApiError } from '../http/api-error';

const CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "img-src 'self' data:",
  "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
].join('; ');

const ASSETS: Record<string, { file: string; type: string }> = {
  '/settings': { file: 'ui/index.html', type: 'text/html; charset=utf-8' },
  '/settings/app.css': { file: 'ui/app.css', type: 'text/css; charset=utf-8' },
  '/settings/app.js': { file: 'dist/ui/ui/app.js', type: 'text/javascript; charset=utf-8' },
  '/settings/try-it.js': { file: 'dist/ui/ui/try-it.js', type: 'text/javascript; charset=utf-8' },
  '/settings/try-live.js': { file: 'dist/ui/ui/try-live.js', type: 'text/javascript; charset=utf-8' },
};

export function settingsRoutes(router: Router): void {
  const root = packageRoot();
  const cache = new Map<string, Buffer>();
  const load = (file: string): Buffer => {
    let body = cache.get(file);
    if (!body) {
      try {
        body = readFileSync(path.join(root, file));
      } catch {
        throw new ApiError(503, 'settings_not_built', 'The settings page is not built; run `npm run compile`.');
      }
      cache.set(file, body);
    }
    return body;
  };
  for (const [route, asset] of Object.entries(ASSETS)) {
    router.get(route, async function settingsAsset(ctx: Context) {
      ctx.set({
        'Content-Security-Policy': CSP,
        'X-Content-Type-Options': 'nosniff',
        'Referrer-Policy': 'no-referrer',
        'X-Frame-Options': 'DENY',
        'Cache-Control': 'no-cache',
      });
      ctx.type = asset.type;
      ctx.body = load(asset.file);
    });
  }
  router.redirect('/settings/', '/settings');
}
