// Builds everything the HTTP layer needs from a validated config, and tears
// it down again in order.
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from './config';
import type { Logger } from './log';
import type { Database } from './store/db';
import { openDatabase } from './store/open-database';
import { ReplicaStore } from './store/replicas';
import { SettingsStore } from './store/settings';
import { ApiKeyStore } from './store/api-keys';
import { resolveAdminKey, type AdminKey } from './store/admin-key';
import { Scheduler } from './stt/local/scheduler';
import { LocalEngine } from './stt/local/engine';
import { LoadMarker } from './stt/local/load-marker';
import { Backends } from './stt/backends';
import { CloudService } from './stt/cloud/service';
import { ModelDownloader } from './stt/local/downloader';
import { ProviderStore } from './store/providers';
import { SecretBox } from './store/secret-box';
import { setLogHandler } from './native';
import { packageRoot } from './package-root';
import type { FirstStartView } from './admin-api';
import { Host } from './host/host';
import { followStoredRouting } from './host/follow-routing';
import { Metrics } from './metrics';
import { decoderThreadsFollowing, FreeCoresMonitor } from './stt/local/free-cores';
import { KeyUsageStore } from './store/key-usage';
import { KeyLimiter } from './http/key-limiter';
import { requestWindows } from './store/request-windows';
import { Semaphore } from './stt/semaphore';
import { POOL_SPARE } from './config';
import { JobStore } from './store/jobs';
import { JobRunner } from './jobs/runner';
import { CallbackSender } from './jobs/callbacks';

export interface Services {
  config: Config;
  logger: Logger;
  db: Database;
  settings: SettingsStore;
  apiKeys: ApiKeyStore;
  adminKey: AdminKey;
  local: LocalEngine;
  stt: Backends;
  providers: ProviderStore;
  cloud: CloudService;
  downloader: ModelDownloader;
  /** Host management (routing, runtimes, providers), shared with the admin CLI. */
  host: Host;
  serviceId: string;
  version: string;
  startedAt: number;
  /** Aborted when shutdown gives up waiting: requests aborted then are answered 503 shutting_down. */
  shuttingDown: AbortController;
  /** The default model's first-start activation, shown in /admin/status; null when there was none. */
  firstStart: FirstStartView | null;
  metrics: Metrics;
  keyUsage: KeyUsageStore;
  keyLimiter: KeyLimiter;
  /** This process among the replicas sharing a database (its row is written only when the database is shared). */
  replica: { id: string; store: ReplicaStore };
  /**
   * Decodes of uploads running at once: each holds a libuv pool thread, the
   * upload, its PCM and the decoder's buffers. Of the POOL_SPARE threads
   * inference leaves, decodes take one at most, so SQLite and fs keep one.
   */
  decodeSlots: Semaphore;
  /** The jobs API: its table, this process's runner, and the directory uploads are spooled to. */
  jobs: { store: JobStore; runner: JobRunner; spoolDir: string; callbacks: CallbackSender };
}

export const VERSION: string = JSON.parse(readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')).version;

/** whisper.cpp logs at ggml levels 1..4; 5 continues a line. */
function routeNativeLogs(logger: Logger): void {
  const native = logger.child({ component: 'whisper.cpp' });
  setLogHandler((level, line) => {
    if (level >= 4) native.error(line);
    else if (level === 3) native.warn(line);
    else native.debug(line);
  });
}

export async function createServices(config: Config, logger: Logger): Promise<Services> {
  routeNativeLogs(logger);
  const db = await openDatabase(config);
  const settings = new SettingsStore(db);
  const apiKeys = new ApiKeyStore(db, (err) => logger.warn({ err: err.message }, 'could not record key use'));
  const adminKey = resolveAdminKey(config.dataDir, config.adminKey);
  const freeCores = config.followFreeCores ? new FreeCoresMonitor() : null;
  const scheduler = new Scheduler({
    threads: config.threads, order: config.scheduling, slots: config.parallel, capacity: config.queueCapacity, ownerCapacity: config.queuePerKey, maxPaused: config.maxPaused,
    decoderThreadsFor: freeCores ? decoderThreadsFollowing(freeCores, config.threads) : undefined,
  });
  const metrics = new Metrics(() => scheduler.stats());
  const loadMarker = new LoadMarker(config.dataDir);
  const local = new LocalEngine({
    modelsDir: config.modelsDir,
    scheduler,
    logger,
    encoderWindow: config.encoderWindow,
    vad: config.vad,
    speechGate: config.speechGate,
    maxTokens: config.maxTokens,
    temperatureFallback: config.temperatureFallback,
    beamSize: config.beamSize,
    loadMarker,
    metrics,
  });
  const box = SecretBox.open(config.dataDir, config.secretKey);
  const providers = new ProviderStore(db, box);
  await providers.seedBuiltIns();
  if (db.shared) await checkSharedSecret(settings, providers, box);
  const bound = await providers.bindLegacyKeys(settings);
  if (bound) logger.info({ providers: bound }, 'stored provider keys sealed again, bound to their providers\' rows and base URLs');
  const cloud = new CloudService(providers, {
    timeoutBaseMs: config.providerTimeoutBaseMs,
    timeoutPerAudioSecondMs: config.providerTimeoutPerAudioSecondMs,
    concurrency: config.providerConcurrency,
    allowInsecureLoopback: config.allowInsecureLoopback,
    allowPrivate: config.allowPrivateAddresses,
  }, logger, metrics);
  const stt = new Backends(settings, local, cloud, config.openAiModelNames);
  const downloader = new ModelDownloader(config.modelsDir, config.modelBaseUrl, config.allowInsecureLoopback, logger, config.vadModelUrl, config.allowUnpinnedModels, config.allowPrivateAddresses);
  const keyUsage = new KeyUsageStore(db, (err) => logger.warn({ err: err.message }, 'could not record key usage'));
  const serviceId = await settings.serviceId();
  const host = new Host({
    modelsDir: config.modelsDir, allowInsecureLoopback: config.allowInsecureLoopback, allowPrivateAddresses: config.allowPrivateAddresses, settings, providers, loadMarker, server: { local, stt, downloader },
  });

  const replicaId = randomUUID();
  const jobStore = new JobStore(db);
  metrics.watchJobs(() => jobStore.counts());
  const spoolDir = config.spoolDir;
  mkdirSync(spoolDir, { recursive: true, mode: 0o700 });
  const decodeSlots = new Semaphore(Math.max(1, POOL_SPARE - 1));
  const keyRevoked = async (keyId: string) => {
    const key = await apiKeys.get(keyId);
    return !key || key.revokedAt !== null;
  };
  const callbacks = new CallbackSender({
    // Its own rules: the provider ones are the host's choice of URL, a callback URL any key holder's.
    store: jobStore, box, rules: { allowInsecureLoopback: config.callbackAllowPrivate, allowPrivate: config.callbackAllowPrivate },
    userAgent: `stt-gateway/${VERSION}`, logger: logger.child({ component: 'job-callbacks' }), metrics, keyRevoked,
  });
  const jobRunner = new JobRunner({
    store: jobStore, stt, decodeSlots, spoolDir, owner: replicaId, maxAudioSeconds: config.maxJobAudioSeconds, retentionMs: config.jobRetentionHours * 3600_000,
    leaseMs: config.jobLeaseSeconds * 1000,
    alone: !db.shared, logger: logger.child({ component: 'jobs' }), keyRevoked,
    onEnded: (outcome) => {
      metrics.jobsFinished.inc({ outcome });
      callbacks.wake();
    },
  });
  const services: Services = {
    config, logger, db, settings, apiKeys, adminKey, local, stt, providers, cloud, downloader, host, serviceId, version: VERSION, startedAt: Date.now(), firstStart: null, shuttingDown: new AbortController(), metrics,
    keyUsage, keyLimiter: new KeyLimiter(keyUsage, requestWindows(db), metrics), replica: { id: replicaId, store: new ReplicaStore(db) },
    decodeSlots,
    jobs: { store: jobStore, runner: jobRunner, spoolDir, callbacks },
  };
  if (freeCores) freeCoresMonitors.set(services, freeCores);
  routingFollowers.set(services, await followStoredRouting(services));
  await jobRunner.start();
  callbacks.start();
  return services;
}

/**
 * Replicas share the stored provider keys: one whose STT_SECRET_KEY cannot
 * open them must not start (and fail each cloud request later). Checked on
 * the stored keys, and on a value sealed by the first replica ever started,
 * so the check holds before any provider key exists.
 */
async function checkSharedSecret(settings: SettingsStore, providers: ProviderStore, box: SecretBox): Promise<void> {
  await providers.checkKeysOpen();
  const sealed = await settings.claim('secret_check', box.seal('stt-gateway'));
  try {
    // Sealed by the first replica ever started: before 2026-12-03, in the v1 format.
    if (box.isLegacy(sealed)) box.openLegacy(sealed);
    else box.open(sealed);
  } catch {
    throw new Error('STT_SECRET_KEY is not the one the other replicas sharing this database use (it cannot open what they sealed): give every replica the same STT_SECRET_KEY');
  }
}

const routingFollowers = new WeakMap<Services, { stop(): void }>();
const freeCoresMonitors = new WeakMap<Services, FreeCoresMonitor>();

export async function closeServices(s: Services): Promise<void> {
  await s.jobs.runner.stop();
  await s.jobs.callbacks.stop();
  routingFollowers.get(s)?.stop();
  freeCoresMonitors.get(s)?.close();
  s.downloader.abortAll();
  await s.local.close();
  setLogHandler(null);
  await s.db.close();
}
