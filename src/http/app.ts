// The Koa application: request logging, the error envelope, then routes.
import Koa from 'koa';
import Router from '@koa/router';
import type { Services } from '../services';
import { errorHandler } from './middleware/errors';
import { requestLog } from './middleware/request-log';
import { publicRoutes } from '../routes/public';
import { transcriptionRoutes } from '../routes/transcriptions';
import { adminRoutes } from '../routes/admin';
import { settingsRoutes } from '../routes/settings';

export function createApp(s: Services): Koa {
  const app = new Koa({ proxy: false });
  app.on('error', (err: Error) => s.logger.debug({ err: err.message }, 'koa error'));
  const router = new Router();
  publicRoutes(router, s);
  transcriptionRoutes(router, s);
  adminRoutes(router, s);
  settingsRoutes(router);
  app.use(requestLog(s.logger)); // outermost, so it logs the status the error handler settles on
  app.use(errorHandler(s.logger));
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: true }));
  return app;
}
