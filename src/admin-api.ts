// The /admin API's answers (and GET /ready's), written once as zod schemas:
// the handlers are typed by the types inferred from them, the settings page
// (ui/app.ts) imports those types, and the OpenAPI document
// (src/routes/openapi.ts) publishes the schemas themselves, descriptions
// included. Answers only: the request bodies are in routes/admin-schemas.ts.
import { z } from 'zod';

const runtimeState = z.enum(['none', 'loading', 'ready', 'error']);
const mode = z.enum(['local', 'cloud']);

/** `{ data: [...] }`, as every /admin list answers. */
export const listOf = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item) });
export interface List<T> {
  data: T[];
}

export const readyViewSchema = z.object({
  ready: z.literal(true),
  mode,
  runtime: z.string().describe("What serves: the local runtime, a cloud route's provider/model, or the spill-over target while the local model loads"),
}).describe('GET /ready: 200 when the current route can serve a transcription now; 503 carries the error envelope');
export type ReadyView = z.infer<typeof readyViewSchema>;

export const spillOverSchema = z.object({
  providerId: z.string(),
  model: z.string(),
  maxWaitSeconds: z.number().nullable().describe("Also spill when the local queue's predicted wait is longer than this; null: only when full or loading"),
});
export type SpillOver = z.infer<typeof spillOverSchema>;

export const routingStateSchema = z.object({
  mode,
  localModel: z.string().nullable(),
  cloud: z.object({ providerId: z.string(), model: z.string() }).nullable(),
  aliases: z.array(z.string()).describe('Extra names accepted as the public model (e.g. large-v3); /v1/models lists them'),
  spillover: spillOverSchema.nullable().describe('Local mode only: where requests go when the local runtime cannot take them in time; null: nowhere (503)'),
});
export type Routing = z.infer<typeof routingStateSchema>;

/** GET and PUT /admin/routing. */
export const routingViewSchema = routingStateSchema.extend({ publicModel: z.string() });
export type RoutingView = z.infer<typeof routingViewSchema>;

export const localStatusViewSchema = z.object({
  activeModel: z.string().nullable(),
  state: runtimeState,
  error: z.string().nullable(),
  crashedLoad: z.object({ runtime: z.string(), file: z.string(), startedAt: z.string() }).nullable().describe('The load the previous process died in'),
});
export type LocalStatusView = z.infer<typeof localStatusViewSchema>;

export const providerFailureViewSchema = z.object({
  status: z.int().nullable(),
  reason: z.string(),
  message: z.string(),
  at: z.string(),
});
export type ProviderFailureView = z.infer<typeof providerFailureViewSchema>;

export const replicaViewSchema = z.object({
  id: z.string().describe('Random per process start'),
  self: z.boolean().describe('The one answering this request'),
  address: z.string().nullable().describe('host:port it listens on, as it sees itself'),
  version: z.string(),
  startedAt: z.string(),
  runtime: z.string().nullable().describe('The local runtime it serves or loads; null when none'),
  state: runtimeState,
  queueDepth: z.int().describe('Jobs running and waiting'),
  lastHeartbeatAt: z.string(),
}).describe('A replica sharing the database (STT_DATABASE_URL), as its last heartbeat said');
export type ReplicaView = z.infer<typeof replicaViewSchema>;

export const firstStartViewSchema = z.object({
  model: z.string(),
  state: z.enum(['downloading', 'activated', 'failed']),
  error: z.string().nullable(),
}).describe("What became of a new host's default model");
export type FirstStartView = z.infer<typeof firstStartViewSchema>;

/** GET /admin/status. */
export const adminStatusSchema = z.object({
  serviceId: z.string(),
  version: z.string(),
  uptimeSeconds: z.int(),
  mode,
  publicModel: z.string(),
  local: localStatusViewSchema,
  queue: z.object({ running: z.int(), waiting: z.int(), capacity: z.int() }),
  jobs: z.object({
    queued: z.int(),
    running: z.int(),
    oldestQueuedSeconds: z.int().nullable(),
  }).describe('The jobs API (POST /v1/audio/jobs): jobs queued and running in the database (every replica\'s), and how long the oldest has waited'),
  system: z.object({ threads: z.int(), rssBytes: z.int() }),
  providers: z.array(z.object({ id: z.string(), enabled: z.boolean(), lastError: providerFailureViewSchema.nullable() })),
  firstStart: firstStartViewSchema.nullable(),
  replicas: z.array(replicaViewSchema).optional().describe('Shared database only: every replica heard from in the last 10 s, this one included; absent with SQLite (one process)'),
  database: z.object({
    backend: z.enum(['sqlite', 'postgres']),
    notifications: z.boolean().describe("PostgreSQL: whether this replica hears other replicas' changes now"),
  }),
});
export type AdminStatus = z.infer<typeof adminStatusSchema>;

/** GET /admin/jobs (items): every key's jobs of the jobs API, newest first. */
export const jobSummarySchema = z.object({
  id: z.string(),
  keyId: z.string(),
  status: z.enum(['queued', 'running', 'done', 'failed', 'cancelled']),
  secondsDone: z.number(),
  secondsTotal: z.number(),
  createdAt: z.string().describe('ISO 8601'),
  finishedAt: z.string().nullable(),
  callbackStatus: z.enum(['pending', 'delivered', 'failed']).nullable().describe('Null: no callback, or not due yet'),
  errorCode: z.string().nullable().describe('Once failed: the error\'s code'),
});
export type JobSummary = z.infer<typeof jobSummarySchema>;

export const downloadViewSchema = z.object({
  state: z.enum(['downloading', 'verifying', 'done', 'failed']),
  file: z.string(),
  receivedBytes: z.int(),
  totalBytes: z.int().nullable(),
  sha256: z.string().nullable(),
  checksumVerified: z.boolean().describe('True when the sha256 matched a published value; false when it was only recorded'),
  error: z.string().nullable(),
});
export type DownloadView = z.infer<typeof downloadViewSchema>;

/** GET /admin/local-models (items). */
export const runtimeEntrySchema = z.object({
  id: z.string(),
  family: z.enum(['whisper', 'parakeet']),
  installed: z.boolean(),
  active: z.boolean(),
  file: z.string().nullable(),
  bytes: z.int().nullable(),
  download: downloadViewSchema.optional().describe("The last download's progress in this server; absent when there was none (and in the CLI)"),
});
export type RuntimeEntry = z.infer<typeof runtimeEntrySchema>;

/** POST /admin/local-models/{id}/download: 202. */
export const downloadStartedSchema = z.object({ id: z.string(), download: downloadViewSchema.nullable() });

/** GET /admin/providers (items), PUT /admin/providers/{id}. */
export const providerViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(['openai', 'deepgram']),
  baseUrl: z.string(),
  enabled: z.boolean(),
  apiKeySet: z.boolean(),
  apiKeyHint: z.string().nullable(),
  models: z.array(z.object({ id: z.string(), alias: z.string().nullable() })),
});
export type ProviderView = z.infer<typeof providerViewSchema>;

/** A key's limits; null: none. */
export const keyLimitsViewSchema = z.object({
  requestsPerMinute: z.int().nullable().describe('Audio requests (transcriptions, translations, jobs, realtime sessions and each of their turns) per minute'),
  audioSecondsPerDay: z.int().nullable().describe('Seconds of audio per UTC day'),
  localOnly: z.boolean().describe('Never sent to a cloud provider, spill-over included'),
});
export type KeyLimits = z.infer<typeof keyLimitsViewSchema>;

export const keyUsageSchema = z.object({
  day: z.string(),
  requests: z.int(),
  audioSeconds: z.number(),
  errors: z.int().describe("Requests answered with an error (4xx, 5xx, a stream's error event), 429s included"),
}).describe("A key's audio requests on one UTC day");
export type KeyUsage = z.infer<typeof keyUsageSchema>;

/** GET /admin/api-keys (items), PATCH /admin/api-keys/{id}, POST /admin/api-keys/{id}/revoke. */
export const apiKeyViewSchema = keyLimitsViewSchema.extend({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
  usage: keyUsageSchema.optional().describe("Today's (UTC); GET /admin/api-keys only"),
});
export type ApiKeyView = z.infer<typeof apiKeyViewSchema>;

/** POST /admin/api-keys: the only answer that carries the key itself. */
export const createdApiKeySchema = keyLimitsViewSchema.extend({
  id: z.string(),
  name: z.string(),
  key: z.string(),
  prefix: z.string(),
  createdAt: z.string(),
});
export type CreatedApiKey = z.infer<typeof createdApiKeySchema>;
