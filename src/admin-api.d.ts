// The /admin API's answers, shared by the server (whose handlers are typed
// against them) and the settings page (ui/app.ts). A declaration file on
// purpose: it holds no code, so the page's own build (ui/tsconfig.json) can
// read it without compiling the server.

/** GET /ready's 200 answer (public, not admin; here so the page shares it). 503 carries the error envelope. */
export interface ReadyView {
  ready: true;
  mode: 'local' | 'cloud';
  /** What serves: the local runtime, a cloud route's provider/model, or the spill-over target while the local model loads. */
  runtime: string;
}

export interface List<T> {
  data: T[];
}

export interface Routing {
  mode: 'local' | 'cloud';
  localModel: string | null;
  cloud: { providerId: string; model: string } | null;
  /** Extra names accepted as the public model (e.g. large-v3); /v1/models lists them. */
  aliases: string[];
  /** Local mode only: where requests go when the local runtime cannot take them in time; null: nowhere (503). */
  spillover: SpillOver | null;
}

export interface SpillOver {
  providerId: string;
  model: string;
  /** Also spill when the local queue's predicted wait is longer than this; null: only when full or loading. */
  maxWaitSeconds: number | null;
}

/** GET and PUT /admin/routing. */
export interface RoutingView extends Routing {
  publicModel: string;
}

export interface LocalStatusView {
  activeModel: string | null;
  state: 'none' | 'loading' | 'ready' | 'error';
  error: string | null;
  /** The load the previous process died in. */
  crashedLoad: { runtime: string; file: string; startedAt: string } | null;
}

export interface ProviderFailureView {
  status: number | null;
  reason: string;
  message: string;
  at: string;
}

/** A replica sharing the database (STT_DATABASE_URL), as its last heartbeat said. */
export interface ReplicaView {
  /** Random per process start. */
  id: string;
  /** The one answering this request. */
  self: boolean;
  /** host:port it listens on, as it sees itself. */
  address: string | null;
  version: string;
  startedAt: string;
  /** The local runtime it serves or loads; null when none. */
  runtime: string | null;
  state: LocalStatusView['state'];
  /** Jobs running and waiting. */
  queueDepth: number;
  lastHeartbeatAt: string;
}

/** GET /admin/status. */
/** What became of a new host's default model (src/first-start.ts). */
export interface FirstStartView {
  model: string;
  state: 'downloading' | 'activated' | 'failed';
  error: string | null;
}

export interface AdminStatus {
  serviceId: string;
  version: string;
  uptimeSeconds: number;
  mode: 'local' | 'cloud';
  publicModel: string;
  local: LocalStatusView;
  queue: { running: number; waiting: number; capacity: number };
  system: { threads: number; rssBytes: number };
  providers: { id: string; enabled: boolean; lastError: ProviderFailureView | null }[];
  firstStart: FirstStartView | null;
  /** Shared database only: every replica heard from in the last 10 s, this one included; absent with SQLite (one process). */
  replicas?: ReplicaView[];
  /** Which store this replica uses, and (PostgreSQL) whether it hears other replicas' changes now. */
  database: { backend: 'sqlite' | 'postgres'; notifications: boolean };
}

export interface DownloadView {
  state: 'downloading' | 'verifying' | 'done' | 'failed';
  file: string;
  receivedBytes: number;
  totalBytes: number | null;
  sha256: string | null;
  /** True when the sha256 matched a published value; false when it was only recorded. */
  checksumVerified: boolean;
  error: string | null;
}

/** GET /admin/local-models (items). */
export interface RuntimeEntry {
  id: string;
  family: 'whisper' | 'parakeet';
  installed: boolean;
  active: boolean;
  file: string | null;
  bytes: number | null;
  /** The last download's progress in this server; absent when there was none (and in the CLI). */
  download?: DownloadView;
}

/** GET /admin/providers (items), PUT /admin/providers/{id}. */
export interface ProviderView {
  id: string;
  name: string;
  kind: 'openai' | 'deepgram';
  baseUrl: string;
  enabled: boolean;
  apiKeySet: boolean;
  apiKeyHint: string | null;
  models: { id: string; alias: string | null }[];
}

/** GET /admin/api-keys (items), POST /admin/api-keys/{id}/revoke. */
/** A key's limits; null: none. */
export interface KeyLimits {
  /** Audio requests (transcriptions, translations) per minute. */
  requestsPerMinute: number | null;
  /** Seconds of audio per UTC day. */
  audioSecondsPerDay: number | null;
  /** Never sent to a cloud provider, spill-over included. */
  localOnly: boolean;
}

/** A key's audio requests on one UTC day. */
export interface KeyUsage {
  day: string;
  requests: number;
  audioSeconds: number;
  /** Requests answered with an error (4xx, 5xx, a stream's error event), 429s included. */
  errors: number;
}

export interface ApiKeyView extends KeyLimits {
  id: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  /** Today's (UTC); GET /admin/api-keys only. */
  usage?: KeyUsage;
}

/** POST /admin/api-keys: the only answer that carries the key itself. */
export interface CreatedApiKey extends KeyLimits {
  id: string;
  name: string;
  key: string;
  prefix: string;
  createdAt: string;
}
