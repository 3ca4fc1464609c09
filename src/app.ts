// The Koa application: request logging, the error envelope, then routes.
import Koa from 'koa';
import Router from '@koa/router';
import type { Services } from './services';
import { errorHandler } from './http/middleware/error-envelope';
import { lingerLimits } from './http/linger';
import { maxBodyBytes } from './http/middleware/upload';
import { requestLog } from './http/middleware/request-log';
import { allowedHost } from './http/middleware/allowed-host';
import { ROUTER_OPTIONS } from './http/router-options';
import { healthRoute, modelRoutes } from './routes/public';
import { requireApiKey } from './http/middleware/auth';
import { guardEveryRoute } from './http/guard-routes';
import { transcriptionRoutes } from './routes/transcriptions';
import { jobRoutes } from './routes/jobs';
import { adminRoutes } from './routes/admin';
import { settingsRoutes } from './routes/settings-page';
import { hostStatus } from './host/status';
import { metricsRoute } from './routes/metrics';

/** Every route; the nested routers' layers are copied into its stack, which tests walk. */
export function createRouter(s: Services): Router {
  const router = new Router(ROUTER_OPTIONS);
  healthRoute(router, s);
  const v1 = new Router({ ...ROUTER_OPTIONS, prefix: '/v1' });
  modelRoutes(v1, s);
  transcriptionRoutes(v1, s);
  jobRoutes(v1, s);
  guardEveryRoute(v1, requireApiKey(s.apiKeys));
  router.use(v1.routes(), v1.allowedMethods({ throw: true }));
  adminRoutes(router, {
    host: s.host, stt: s.stt, providers: s.providers, apiKeys: s.apiKeys, keyUsage: s.keyUsage, adminKey: s.adminKey.value, status: () => hostStatus(s), jobs: s.jobs,
  });
  settingsRoutes(router);
  metricsRoute(router, s.metrics, s.config.metrics, s.adminKey.value, s.config.metricsToken);
  return router;
}

export function createApp(s: Services): Koa {
  const app = new Koa({ proxy: false });
  app.on('error', (err: Error) => s.logger.debug({ err: err.message }, 'koa error'));
  const router = createRouter(s);
  app.use(requestLog(s.logger, s.metrics)); // outermost, so it logs the status the error handler settles on
  app.use(errorHandler(s.logger, lingerLimits(maxBodyBytes(s.config.maxUploadBytes))));
  app.use(allowedHost(s.config.allowedHosts));
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: true }));
  return app;
}
