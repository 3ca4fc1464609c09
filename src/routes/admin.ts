// /admin/*: host management with the admin bearer. Every change is validated
// in full before anything is written, and takes effect for the next request.
import Router from '@koa/router';
import type { Context } from 'koa';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { badRequest, conflict, notFound } from '../http/errors';
import { requireAdminKey } from '../http/middleware/auth';
import { jsonBody } from '../http/validate';
import { ROUTER_OPTIONS } from '../http/router-options';
import { guardEveryRoute } from '../http/guard-routes';
import { checkRemoteUrl } from '../net/remote-url';
import type { Services } from '../services';
import { installedFile, RUNTIMES, runtimeById } from '../stt/catalogue';
import type { Routing } from '../store/settings';
import { LOCAL_ALIAS } from '../stt/router';
import type { ProviderRecord, ProviderUpdate } from '../store/providers';

const idPattern = /^[a-z0-9][a-z0-9_-]{0,63}$/;

const routingSchema = z.strictObject({
  mode: z.enum(['local', 'cloud']).optional(),
  localModel: z.string().nullable().optional(),
  cloud: z.strictObject({ providerId: z.string().min(1), model: z.string().min(1) }).nullable().optional(),
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

export function adminRoutes(root: Router, s: Services): void {
  const router = new Router({ ...ROUTER_OPTIONS, prefix: '/admin' });

  router.get('/status', async function status(ctx: Context) {
    const routing = await s.stt.current();
    const q = s.local.scheduler.stats();
    ctx.body = {
      serviceId: s.serviceId,
      version: s.version,
      uptimeSeconds: Math.floor((Date.now() - s.startedAt) / 1000),
      mode: routing.mode,
      publicModel: await s.stt.publicModel(),
      local: s.local.status(),
      queue: { running: q.running, waiting: q.waiting, capacity: q.capacity },
      system: { threads: s.config.threads, rssBytes: process.memoryUsage().rss },
      providers: (await s.providers.list()).map((p) => ({ id: p.id, enabled: p.enabled, lastError: s.cloud.failures.get(p.id) ?? null })),
      firstStart: s.firstStart,
    };
  });

  // ---- routing
  router.get('/routing', async function getRouting(ctx: Context) {
    ctx.body = { ...(await s.stt.current()), publicModel: await s.stt.publicModel() };
  });

  router.put('/routing', jsonBody(routingSchema), async function putRouting(ctx: Context) {
    const body = ctx.state.body as z.infer<typeof routingSchema>;
    const current = await s.stt.current();
    const next: Routing = {
      mode: body.mode ?? current.mode,
      localModel: body.localModel === undefined ? current.localModel : body.localModel,
      cloud: body.cloud === undefined ? current.cloud : body.cloud,
    };
    if (next.localModel !== null && body.localModel !== undefined) {
      const spec = runtimeById(next.localModel);
      if (!spec) throw badRequest('unknown_runtime', `Unknown local runtime "${next.localModel}"; known: ${RUNTIMES.map((r) => r.id).join(', ')}.`, 'localModel');
      if (!(await installedFile(s.config.modelsDir, spec))) {
        throw conflict('runtime_not_installed', `The runtime "${spec.id}" is not installed; download it first.`, 'localModel');
      }
    }
    if (next.cloud && (body.cloud !== undefined || next.mode === 'cloud')) await checkCloudTarget(s, next.cloud);
    if (next.mode === 'cloud' && !next.cloud) throw badRequest('missing_cloud_target', 'Cloud mode needs a cloud target {providerId, model}.', 'cloud');
    await s.settings.setRouting(next);
    s.stt.invalidate(next);
    // Naming a runtime (or none) is the host's explicit choice, which lifts a
    // crashed load's block; a change of mode alone keeps it.
    if (body.localModel !== undefined) s.local.forgetCrashedLoad();
    if (next.localModel !== current.localModel || s.local.status().state === 'error') {
      if (next.localModel) s.local.activate(next.localModel).catch(() => {});
      else s.local.deactivate();
    }
    ctx.body = { ...next, publicModel: await s.stt.publicModel() };
  });

  // ---- local models
  router.get('/local-models', async function listLocalModels(ctx: Context) {
    const routing = await s.stt.current();
    ctx.body = {
      data: await Promise.all(RUNTIMES.map(async (r) => {
        // Progress is copied before looking at the disk: a download says "done"
        // only after its file is in place, so a "done" copy always finds the file.
        const d = s.downloader.progress(r.id);
        const download = d && { state: d.state, file: d.file, receivedBytes: d.receivedBytes, totalBytes: d.totalBytes, sha256: d.sha256, checksumVerified: d.checksumVerified, error: d.error };
        const f = await installedFile(s.config.modelsDir, r);
        return {
          id: r.id,
          family: r.family,
          installed: !!f,
          active: routing.localModel === r.id,
          file: f?.name ?? null,
          bytes: f?.bytes ?? null,
          download,
        };
      })),
    };
  });

  router.post('/local-models/:id/download', jsonBody(downloadSchema), async function download(ctx: Context) {
    const spec = runtimeById(ctx.params.id);
    if (!spec) throw notFound('unknown_runtime', `Unknown local runtime "${ctx.params.id}".`, 'id');
    const { variant } = ctx.state.body as z.infer<typeof downloadSchema>;
    const file = variant === undefined ? spec.files[0] : spec.files.find((f) => f.name === variant);
    if (!file) throw badRequest('unknown_variant', `"${variant}" is not a file of ${spec.id}; one of ${spec.files.map((f) => f.name).join(', ')}.`, 'variant');
    if (s.downloader.isRunning(spec.id)) throw conflict('download_in_progress', `A download of ${spec.id} is already running.`, 'id');
    void s.downloader.start(spec, file);
    ctx.status = 202;
    ctx.body = { id: spec.id, download: s.downloader.progress(spec.id) };
  });

  router.delete('/local-models/:id', async function deleteLocalModel(ctx: Context) {
    const spec = runtimeById(ctx.params.id);
    if (!spec) throw notFound('unknown_runtime', `Unknown local runtime "${ctx.params.id}".`, 'id');
    const routing = await s.stt.current();
    if (routing.localModel === spec.id || s.local.status().activeModel === spec.id) {
      throw conflict('runtime_active', `${spec.id} is the active local runtime; activate another or none first.`, 'id');
    }
    if (s.downloader.isRunning(spec.id)) throw conflict('download_in_progress', `${spec.id} is being downloaded.`, 'id');
    for (const f of spec.files) {
      await rm(path.join(s.config.modelsDir, f.name), { force: true });
      await rm(path.join(s.config.modelsDir, `.${f.name}.partial`), { force: true });
    }
    ctx.status = 204;
  });

  // ---- providers
  router.get('/providers', async function listProviders(ctx: Context) {
    ctx.body = { data: await s.providers.list() };
  });

  router.put('/providers/:id', jsonBody(providerSchema), async function putProvider(ctx: Context) {
    const id = ctx.params.id;
    if (!idPattern.test(id)) throw badRequest('invalid_value', 'A provider id is 1-64 lower-case letters, digits, "-" or "_".', 'id');
    const update = ctx.state.body as ProviderUpdate;
    const existing = await s.providers.get(id);
    if (!existing) {
      if (!update.kind) throw badRequest('missing_field', 'A new provider needs "kind" (openai or deepgram).', 'kind');
      if (!update.baseUrl) throw badRequest('missing_field', 'A new provider needs "baseUrl".', 'baseUrl');
    }
    if (update.baseUrl !== undefined) {
      const problem = checkRemoteUrl(update.baseUrl, s.config.allowInsecureLoopback);
      if (problem) throw badRequest('invalid_value', `"baseUrl": ${problem}.`, 'baseUrl');
    }
    if (update.models) {
      const seen = new Set<string>();
      for (const [i, m] of update.models.entries()) {
        const alias = m.alias || `${id}/${m.id}`;
        if (seen.has(m.id) || seen.has(alias) || alias === LOCAL_ALIAS) {
          throw badRequest('invalid_value', `Model ids and aliases must be unique and not "${LOCAL_ALIAS}".`, `models.${i}`);
        }
        seen.add(m.id);
        seen.add(alias);
      }
    }
    // A stored key was given for one destination: moving the provider to
    // another base URL or kind without a new key would send the old key there.
    const moves = !!existing && ((update.baseUrl !== undefined && update.baseUrl !== existing.baseUrl) ||
      (update.kind !== undefined && update.kind !== existing.kind));
    if (moves && update.apiKey === undefined) update.apiKey = null;
    // Refuse a change that would break the live cloud route.
    const routing = await s.stt.current();
    const route = routing.cloud;
    if (existing && routing.mode === 'cloud' && route && route.providerId === id) {
      const model = route.model;
      if (update.enabled === false) throw conflict('provider_in_use', 'This provider serves the current cloud route; switch routing first.', 'enabled');
      if (update.apiKey === null) {
        throw conflict('provider_in_use', moves
          ? 'This provider serves the current cloud route; a new baseUrl or kind needs its API key in the same request.'
          : 'This provider serves the current cloud route; its key cannot be cleared.', 'apiKey');
      }
      if (update.models && !update.models.some((m) => m.id === model)) {
        throw conflict('provider_in_use', `The current cloud route uses model "${model}".`, 'models');
      }
    }
    const record = await s.providers.upsert(id, existing, update);
    s.stt.invalidate();
    ctx.status = existing ? 200 : 201;
    ctx.body = record;
  });

  // ---- API keys
  router.get('/api-keys', async function listKeys(ctx: Context) {
    ctx.body = { data: await s.apiKeys.list() };
  });

  router.post('/api-keys', jsonBody(keySchema), async function createKey(ctx: Context) {
    const { name } = ctx.state.body as z.infer<typeof keySchema>;
    const k = await s.apiKeys.create(name);
    ctx.status = 201;
    ctx.body = { id: k.id, name: k.name, key: k.key, prefix: k.prefix, createdAt: k.createdAt };
  });

  router.post('/api-keys/:id/revoke', async function revokeKey(ctx: Context) {
    const record = await s.apiKeys.revoke(ctx.params.id);
    if (!record) throw notFound('unknown_api_key', `No API key with id "${ctx.params.id}".`, 'id');
    ctx.body = record;
  });

  guardEveryRoute(router, requireAdminKey(s.adminKey.value));
  root.use(router.routes(), router.allowedMethods({ throw: true }));
}

async function checkCloudTarget(s: Services, cloud: { providerId: string; model: string }): Promise<ProviderRecord> {
  const p = await s.providers.get(cloud.providerId);
  if (!p) throw badRequest('unknown_provider', `Unknown provider "${cloud.providerId}".`, 'cloud.providerId');
  if (!p.models.some((m) => m.id === cloud.model)) {
    throw badRequest('unknown_model', `Provider "${p.id}" has no model "${cloud.model}".`, 'cloud.model');
  }
  if (!p.enabled) throw badRequest('provider_disabled', `Provider "${p.id}" is disabled.`, 'cloud.providerId');
  if (!p.apiKeySet) throw badRequest('provider_key_missing', `Provider "${p.id}" has no API key.`, 'cloud.providerId');
  return p;
}

