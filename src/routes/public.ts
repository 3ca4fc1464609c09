// GET /health, /ready and /openapi.json (no auth), GET /v1/models and /v1/models/{id} (under the /v1 router's API-key guard).
import Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../services';
import type { Backends } from '../stt/backends';
import { ApiError, notFound } from '../http/api-error';
import { readiness } from '../stt/readiness';
import { openApiDocument } from './openapi';

export function healthRoute(router: Router, s: Pick<Services, 'serviceId' | 'version' | 'stt' | 'local' | 'cloud'>): void {
  router.get('/health', async function health(ctx: Context) {
    ctx.body = { serviceId: s.serviceId, version: s.version, publicModel: await s.stt.publicModel() };
  });
  // For load balancers and orchestrators: 503 with the reason while the route cannot serve.
  router.get('/ready', async function ready(ctx: Context) {
    const r = await readiness(s);
    if (!r.ready) throw new ApiError(503, r.code, r.message);
    ctx.body = r;
  });
  const document = openApiDocument(s.version);
  router.get('/openapi.json', async function openApi(ctx: Context) {
    ctx.body = document;
  });
}

const modelObject = (id: string) => ({ id, object: 'model', created: 0, owned_by: 'service' });

export function modelRoutes(v1: Router, s: { stt: Backends }): void {
  v1.get('/models', async function listModels(ctx: Context) {
    const ids = await s.stt.listedModels();
    ctx.body = { object: 'list', data: ids.map(modelObject) };
  });
  // OpenAI's models.retrieve(): the same object for every id the list shows. A wildcard,
  // since a cloud route's id is "provider/model" and curl sends its slash raw.
  v1.get('/models/*id', async function retrieveModel(ctx: Context) {
    const id = ctx.params.id;
    if (!(await s.stt.listedModels()).includes(id)) {
      throw notFound('model_not_found', `The model "${id}" does not exist on this server; GET /v1/models lists the ones that do.`, 'model');
    }
    ctx.body = modelObject(id);
  });
}
