// GET /health (no auth) and GET /v1/models (API key).
import Router from '@koa/router';
import type { Context } from 'koa';
import { requireApiKey } from '../http/middleware/auth';
import type { Services } from '../services';

export function publicRoutes(router: Router, s: Services): void {
  router.get('/health', async function health(ctx: Context) {
    ctx.body = { serviceId: s.serviceId, version: s.version, publicModel: await s.stt.publicModel() };
  });

  router.get('/v1/models', requireApiKey(s.apiKeys), async function listModels(ctx: Context) {
    const ids = await s.stt.listedModels();
    ctx.body = { object: 'list', data: ids.map((id) => ({ id, object: 'model', created: 0, owned_by: 'service' })) };
  });
}
