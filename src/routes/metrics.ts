// GET /metrics in Prometheus's text format. STT_METRICS decides who may read
// it: nobody (no route), the admin key (default: queue depths and provider
// errors describe the host), or anyone who reaches the port. With the admin
// key, STT_METRICS_TOKEN opens this route alone, so that a scraper's
// credentials cannot change the host's settings.
import Router from '@koa/router';
import type { Context } from 'koa';
import type { Metrics } from '../metrics';
import type { Config } from '../config';
import { requireAdminKey } from '../http/middleware/auth';
import { ROUTER_OPTIONS } from '../http/router-options';
import { guardEveryRoute } from '../http/guard-routes';

export function metricsRoute(root: Router, metrics: Metrics, access: Config['metrics'], adminKey: string, metricsToken: string | null): void {
  if (access === 'off') return;
  const router = new Router(ROUTER_OPTIONS);
  router.get('/metrics', async function scrape(ctx: Context) {
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
  if (access === 'admin') guardEveryRoute(router, requireAdminKey(adminKey, metricsToken));
  root.use(router.routes(), router.allowedMethods({ throw: true }));
}
