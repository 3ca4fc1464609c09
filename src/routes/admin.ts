// /admin/*: host management with the admin bearer. The rules live in
// src/host; this file parses requests, calls them and shapes the answers.
// Every change takes effect for the next request.
import Router from '@koa/router';
import type { Context } from 'koa';
import { notFound } from '../http/api-error';
import { requireAdminKey } from '../http/middleware/auth';
import { jsonBody } from '../http/validate';
import { ROUTER_OPTIONS } from '../http/router-options';
import { guardEveryRoute } from '../http/guard-routes';
import type { Host } from '../host/host';
import type { ApiKeyStore } from '../store/api-keys';
import type { ProviderStore } from '../store/providers';
import type { Backends } from '../stt/backends';
import { downloadSchema, keyLimitsSchema, keySchema, providerSchema, routingSchema } from './admin-schemas';
import { utcDay, type KeyUsageStore } from '../store/key-usage';
import type { AdminStatus, ApiKeyView, CreatedApiKey, JobSummary, List, ProviderView, RoutingView, RuntimeEntry } from '../admin-api';
import type { JobStore } from '../store/jobs';
import { cancelOrRemove } from '../jobs/cancel';
import { jobSummary } from '../jobs/view';
import { bodyOf } from '../http/state';

/** Jobs GET /admin/jobs lists: the newest. */
const JOB_PAGE = 50;

/** Sets an answer typed as the admin API writes it (src/admin-api.ts). */
function answer<T>(ctx: Context, body: T, status = 200): void {
  ctx.status = status;
  ctx.body = body;
}

export interface AdminRouteParts {
  host: Host;
  stt: Backends;
  providers: ProviderStore;
  apiKeys: ApiKeyStore;
  keyUsage: KeyUsageStore;
  adminKey: string;
  /** GET /admin/status's body. */
  status(): Promise<AdminStatus>;
  /** The jobs API: its table and the spool, and this process's runner (to stop a job it runs). */
  jobs: { store: JobStore; spoolDir: string; runner: { cancel(id: string): void } };
}

export function adminRoutes(root: Router, a: AdminRouteParts): void {
  const router = new Router({ ...ROUTER_OPTIONS, prefix: '/admin' });

  router.get('/status', async function status(ctx: Context) {
    ctx.body = await a.status();
  });

  // ---- routing
  router.get('/routing', async function getRouting(ctx: Context) {
    answer<RoutingView>(ctx, { ...(await a.stt.current()), publicModel: await a.stt.publicModel() });
  });

  router.put('/routing', jsonBody(routingSchema), async function putRouting(ctx: Context) {
    const next = await a.host.changeRouting(bodyOf(ctx, routingSchema));
    answer<RoutingView>(ctx, { ...next, publicModel: await a.stt.publicModel() });
  });

  // ---- local models
  router.get('/local-models', async function listLocalModels(ctx: Context) {
    answer<List<RuntimeEntry>>(ctx, { data: await a.host.listRuntimes() });
  });

  router.post('/local-models/:id/download', jsonBody(downloadSchema), async function download(ctx: Context) {
    const { variant } = bodyOf(ctx, downloadSchema);
    ctx.body = a.host.startDownload(ctx.params.id, variant);
    ctx.status = 202;
  });

  router.delete('/local-models/:id', async function deleteLocalModel(ctx: Context) {
    await a.host.deleteRuntime(ctx.params.id);
    ctx.status = 204;
  });

  // ---- providers
  router.get('/providers', async function listProviders(ctx: Context) {
    answer<List<ProviderView>>(ctx, { data: await a.providers.list() });
  });

  router.put('/providers/:id', jsonBody(providerSchema), async function putProvider(ctx: Context) {
    const { record, created } = await a.host.putProvider(ctx.params.id, bodyOf(ctx, providerSchema));
    answer<ProviderView>(ctx, record, created ? 201 : 200);
  });

  // ---- API keys
  router.get('/api-keys', async function listKeys(ctx: Context) {
    const day = utcDay(Date.now());
    const usage = await a.keyUsage.onDay(day);
    const none = { day, requests: 0, audioSeconds: 0, errors: 0 };
    answer<List<ApiKeyView>>(ctx, { data: (await a.apiKeys.list()).map((k) => ({ ...k, usage: usage.get(k.id) ?? none })) });
  });

  router.post('/api-keys', jsonBody(keySchema), async function createKey(ctx: Context) {
    const { name, ...limits } = bodyOf(ctx, keySchema);
    const k = await a.apiKeys.create(name, limits);
    answer<CreatedApiKey>(ctx, {
      id: k.id, name: k.name, key: k.key, prefix: k.prefix, createdAt: k.createdAt,
      requestsPerMinute: k.requestsPerMinute, audioSecondsPerDay: k.audioSecondsPerDay, localOnly: k.localOnly,
    }, 201);
  });

  router.patch('/api-keys/:id', jsonBody(keyLimitsSchema), async function setKeyLimits(ctx: Context) {
    const record = await a.apiKeys.setLimits(ctx.params.id, bodyOf(ctx, keyLimitsSchema));
    if (!record) throw notFound('unknown_api_key', `No API key with id "${ctx.params.id}".`, 'id');
    answer<ApiKeyView>(ctx, record);
  });

  router.post('/api-keys/:id/revoke', async function revokeKey(ctx: Context) {
    const record = await a.apiKeys.revoke(ctx.params.id);
    if (!record) throw notFound('unknown_api_key', `No API key with id "${ctx.params.id}".`, 'id');
    answer<ApiKeyView>(ctx, record);
  });

  router.get('/jobs', async function listJobs(ctx: Context) {
    const jobs = await a.jobs.store.list(null, JOB_PAGE);
    answer<List<JobSummary>>(ctx, { data: jobs.map(jobSummary) });
  });

  router.delete('/jobs/:id', async function deleteJob(ctx: Context) {
    const job = await a.jobs.store.get(ctx.params.id);
    if (!job || !(await cancelOrRemove(a.jobs.store, a.jobs.spoolDir, job, (id) => a.jobs.runner.cancel(id)))) {
      throw notFound('job_not_found', `No job "${ctx.params.id}".`, 'id');
    }
    ctx.status = 204;
  });

  guardEveryRoute(router, requireAdminKey(a.adminKey));
  root.use(router.routes(), router.allowedMethods({ throw: true }));
}
