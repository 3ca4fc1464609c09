// GET /health (no auth) and GET /v1/models (under the /v1 router's API-key guard).
import Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../services';

export function healthRoute(router: Router, s: Services): void {
  router.get('/health', async function health(ctx: Context) {
    ctx.body = { serviceId: s.serviceId, version: s.version, publicModel: await s.stt.publicModel() };
  });
}

export function modelRoutes(v1: Router, s: Services): void {
  v1.get('/models', async function listModels(ctx: Context) {
    const ids = await s.stt.listedModels();
    ctx.body = { object: 'list', data: ids.map((id) => ({ id, object: 'model', created: 0, owned_by: 'service' })) };
  });
}
