// /admin/*: host management with the admin bearer. The rules live in
// src/host; this file parses requests, calls them and shapes the answers.
// Every change takes effect for the next request.
import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { notFound } from '../http/errors';
import { requireAdminKey } from '../http/middleware/auth';
import { jsonBody } from '../http/validate';
import { ROUTER_OPTIONS } from '../http/router-options';
import { guardEveryRoute } from '../http/guard-routes';
import type { Host } from '../host/host';
import type { ApiKeyStore } from '../store/api-keys';
import type { ProviderStore, ProviderUpdate } from '../store/providers';
import type { SttRouter } from '../stt/router';
import type { AdminStatus, ApiKeyView, CreatedApiKey, List, ProviderView, RoutingView, RuntimeEntry } from '../admin-api';

const routingSchema = z.strictObject({
  mode: z.enum(['local', 'cloud']).optional(),
  localModel: z.string().nullable().optional(),
  cloud: z.strictObject({ providerId: z.string().min(1), model: z.string().min(1) }).nullable().optional(),
  aliases: z.array(z.string().max(200)).max(100).optional(),
});

const providerSchema = z.strictObject({
  name: z.string().min(1).max(100).optional(),
  kind: z.enum(['openai', 'deepgram']).optional(),
  baseUrl: z.string().max(2000).optional(),
  apiKey: z.string().min(1).max(1000).nullable().optional(),
  enabled: z.boolean().optional(),
  models: z.array(z.strictObject({ id: z.string().min(1).max(200), alias: z.string().min(1).max(200).nullable().optional() })).max(50).optional(),
});

const keySchema = z.strictObject({ name: z.string().trim().min(1).max(100) });
const downloadSchema = z.strictObject({ variant: z.string().min(1).max(200).optional() });

export interface AdminRouteParts {
  host: Host;
  stt: SttRouter;
  providers: ProviderStore;
  apiKeys: ApiKeyStore;
  adminKey: string;
  /** GET /admin/status's body. */
  status(): Promise<AdminStatus>;
}

export function adminRoutes(root: Router, a: AdminRouteParts): void {
  const router = new Router({ ...ROUTER_OPTIONS, prefix: '/admin' });

  router.get('/status', async function status(ctx: Context) {
    ctx.body = await a.status();
  });

  // ---- routing
  router.get('/routing', async function getRouting(ctx: Context) {
    const body: RoutingView = { ...(await a.stt.current()), publicModel: await a.stt.publicModel() };
    ctx.body = body;
  });

  router.put('/routing', jsonBody(routingSchema), async function putRouting(ctx: Context) {
    const next = await a.host.changeRouting(ctx.state.body as z.infer<typeof routingSchema>);
    const body: RoutingView = { ...next, publicModel: await a.stt.publicModel() };
    ctx.body = body;
  });

  // ---- local models
  router.get('/local-models', async function listLocalModels(ctx: Context) {
    const body: List<RuntimeEntry> = { data: await a.host.listRuntimes() };
    ctx.body = body;
  });

  router.post('/local-models/:id/download', jsonBody(downloadSchema), async function download(ctx: Context) {
    const { variant } = ctx.state.body as z.infer<typeof downloadSchema>;
    ctx.body = a.host.startDownload(ctx.params.id, variant);
    ctx.status = 202;
  });

  router.delete('/local-models/:id', async function deleteLocalModel(ctx: Context) {
    await a.host.deleteRuntime(ctx.params.id);
    ctx.status = 204;
  });

  // ---- providers
  router.get('/providers', async function listProviders(ctx: Context) {
    const body: List<ProviderView> = { data: await a.providers.list() };
    ctx.body = body;
  });

  router.put('/providers/:id', jsonBody(providerSchema), async function putProvider(ctx: Context) {
    const { record, created } = await a.host.putProvider(ctx.params.id, ctx.state.body as ProviderUpdate);
    const body: ProviderView = record;
    ctx.status = created ? 201 : 200;
    ctx.body = body;
  });

  // ---- API keys
  router.get('/api-keys', async function listKeys(ctx: Context) {
    const body: List<ApiKeyView> = { data: await a.apiKeys.list() };
    ctx.body = body;
  });

  router.post('/api-keys', jsonBody(keySchema), async function createKey(ctx: Context) {
    const { name } = ctx.state.body as z.infer<typeof keySchema>;
    const k = await a.apiKeys.create(name);
    const body: CreatedApiKey = { id: k.id, name: k.name, key: k.key, prefix: k.prefix, createdAt: k.createdAt };
    ctx.status = 201;
    ctx.body = body;
  });

  router.post('/api-keys/:id/revoke', async function revokeKey(ctx: Context) {
    const record = await a.apiKeys.revoke(ctx.params.id);
    if (!record) throw notFound('unknown_api_key', `No API key with id "${ctx.params.id}".`, 'id');
    const body: ApiKeyView = record;
    ctx.body = body;
  });

  guardEveryRoute(router, requireAdminKey(a.adminKey));
  root.use(router.routes(), router.allowedMethods({ throw: true }));
}
