// The one place environment variables are read. Every variable is documented
// in docs/configuration.md; a bad value stops start-up with one line naming it.
import os from 'node:os';
import path from 'node:path';
import { accessSync, constants, mkdirSync } from 'node:fs';
import { checkRemoteUrl } from './net/remote-url';
import { runtimeById } from './stt/catalogue';
import type { SchedulingOrder } from './stt/local/scheduler';
import { DEFAULT_ENCODER_WINDOW, ENCODER_WINDOWS, type EncoderWindow } from './stt/local/encoder-window';
import { ownQuotaReader, usableCores } from './stt/local/cpu-quota';
import { DEFAULT_STORE_GRACE_S } from './store/shared-cache';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  modelsDir: string;
  adminKey: string | null;
  threads: number;
  parallel: number;
  queueCapacity: number;
  /** OpenAI's model names a request may send for the public model (STT_OPENAI_MODEL_NAMES). */
  openAiModelNames: string[];
  /** Waiting places in the local queue one API key may hold (STT_QUEUE_PER_KEY; default half the queue). */
  queuePerKey: number;
  maxUploadBytes: number;
  /** Longest clip accepted, read from the WAV header before decoding. */
  maxAudioSeconds: number;
  /** The jobs API (docs/api.md, "Jobs: long recordings"): largest upload, spooled to disk (STT_MAX_JOB_UPLOAD_BYTES). */
  maxJobUploadBytes: number;
  /** Longest recording a job takes (STT_MAX_JOB_AUDIO_SECONDS). */
  maxJobAudioSeconds: number;
  /** Hours an ended job's result is kept (STT_JOB_RETENTION_HOURS). */
  jobRetentionHours: number;
  /** How long a job's lease outlives its last renewal: a dead replica's job is taken over after it (STT_JOB_LEASE_SECONDS). */
  jobLeaseSeconds: number;
  /** Jobs one API key may have queued or running (STT_MAX_JOBS_PER_KEY). */
  maxJobsPerKey: number;
  /** Where job uploads are kept until their job ends (STT_SPOOL_DIR): replicas must share it. */
  spoolDir: string;
  /** Free space the spool's disk keeps beyond the job uploads arriving, each counted at the most it can write (STT_SPOOL_MIN_FREE_MB). */
  spoolMinFreeBytes: number;
  modelBaseUrl: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Whisper's encoder window for clips under 30 s (STT_ENCODER_WINDOW). */
  encoderWindow: EncoderWindow;
  /** Transcribe only the speech Silero VAD finds, unless a request asks otherwise (STT_VAD). */
  vad: boolean;
  /** Silero decides whether and where anyone speaks, Whisper decodes everything (STT_SPEECH_GATE, default on). */
  speechGate: boolean;
  /** Where the Silero VAD model is fetched from when a local runtime is installed. */
  vadModelUrl: string;
  /** Which local job computes next: shortest audio first with preemption (default), or arrival order without (a benchmark control). */
  scheduling: SchedulingOrder;
  maxTokens: number;
  temperatureFallback: boolean;
  /** Whisper beams per window (STT_BEAM_SIZE); 1 is greedy. */
  beamSize: number;
  /** A job's decoder threads follow the cores other processes leave free (STT_FOLLOW_FREE_CORES, default on; docs/performance.md#sharing-the-cpu). */
  followFreeCores: boolean;
  deadlineBaseMs: number;
  deadlinePerAudioSecondMs: number;
  shutdownTimeoutMs: number;
  providerTimeoutBaseMs: number;
  providerTimeoutPerAudioSecondMs: number;
  secretKey: string | null;
  /** PostgreSQL shared by several replicas (STT_DATABASE_URL); null: the SQLite file in the data dir. */
  databaseUrl: string | null;
  /** STT_STORE_GRACE_S: how long a replica serves cached keys and providers while PostgreSQL cannot be reached. */
  storeGraceSeconds: number;
  /** Host header names accepted (lower case; ".example.com" also admits subdomains); null = any. */
  allowedHosts: string[] | null;
  /** Permits http: to loopback addresses for model downloads and providers (tests, local mirrors). */
  allowInsecureLoopback: boolean;
  /** Lets providers and model downloads reach loopback and private-network addresses, over https too (STT_ALLOW_PRIVATE_ADDRESSES). */
  allowPrivateAddresses: boolean;
  /**
   * Lets job callbacks reach loopback and private-network addresses, plain
   * http to loopback included (STT_CALLBACK_ALLOW_PRIVATE_ADDRESSES). Apart
   * from the provider rules: a callback URL is any key holder's choice.
   */
  callbackAllowPrivate: boolean;
  /** Installs downloaded catalogue files that have no pinned sha256 (STT_ALLOW_UNPINNED_MODELS; default: refused). */
  allowUnpinnedModels: boolean;
  /** libuv's pool in this process (UV_THREADPOOL_SIZE, read by libuv at its first use). */
  threadpoolSize: number;
  /** Long jobs paused at once: each holds a pool thread, so slots + paused + 2 stay within the pool. */
  maxPaused: number;
  /** Runtime activated on a new host's first start; null = none. */
  defaultModel: string | null;
  /** Cloud transcriptions in flight at once; beyond it 503 queue_full. */
  providerConcurrency: number;
  /** Time a client has to send its request headers. */
  headersTimeoutMs: number;
  /** Time a client has to send its whole request, upload included. */
  uploadTimeoutMs: number;
  /** Silence that closes a socket while a request is arriving or none is under way. */
  idleTimeoutMs: number;
  /** Open connections at most; past it the oldest one that has not authenticated is closed. */
  maxConnections: number;
  /** Realtime transcription sessions (/v1/realtime) open at once, all keys together (STT_REALTIME_MAX_SESSIONS). */
  realtimeMaxSessions: number;
  /** ... and for one API key (STT_REALTIME_SESSIONS_PER_KEY). */
  realtimeSessionsPerKey: number;
  /** Silence (no client event) that closes a realtime session (STT_REALTIME_IDLE_TIMEOUT_MS). */
  realtimeIdleMs: number;
  /** Drafts of realtime turns still being heard, for their deltas (STT_REALTIME_DRAFTS, on unless "0"). */
  realtimeDrafts: boolean;
  /** The Wyoming server's TCP port (STT_WYOMING_PORT); null: no Wyoming server (the default). */
  wyomingPort: number | null;
  /** ... and the address it listens on (STT_WYOMING_HOST, loopback unless set: Wyoming has no authentication). */
  wyomingHost: string;
  /** GET /metrics: not served, behind the admin key (default), or open to anyone who reaches the port. */
  metrics: 'off' | 'admin' | 'public';
  /** A bearer token that reads /metrics and nothing else, beside the admin key (STT_METRICS_TOKEN): a scraper need not hold the admin key. */
  metricsToken: string | null;
}

export class ConfigError extends Error {
  constructor(readonly variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `expected an integer, got "${raw}"`);
  const v = Number(raw);
  if (v < min || v > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${v}`);
  return v;
}

function bool(env: Env, name: string): boolean {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (raw === '' || raw === '0' || raw === 'false' || raw === 'no') return false;
  if (raw === '1' || raw === 'true' || raw === 'yes') return true;
  throw new ConfigError(name, `expected true or false, got "${env[name]}"`);
}

function writableDir(name: string, dir: string): string {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.R_OK | constants.W_OK);
  } catch {
    throw new ConfigError(name, `directory "${dir}" cannot be created or is not writable`);
  }
  return dir;
}

/** Pool threads kept free of inference for WAV decoding, SQLite and fs. */
export const POOL_SPARE = 2;
/** The pool size a server with `parallel` slots wants: every slot, as many paused jobs, and the spare. */
export const wantedThreadpoolSize = (parallel: number): number => Math.max(4, 2 * parallel + POOL_SPARE);

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const DEFAULT_MODEL_BASE_URL = 'https://huggingface.co/ggerganov/whisper.cpp/resolve/main';
/** whisper.cpp's own Silero conversion (its models/download-vad-model.sh fetches from this repository). */
export const DEFAULT_VAD_MODEL_URL = 'https://huggingface.co/ggml-org/whisper-vad/resolve/main/ggml-silero-v6.2.0.bin';

/**
 * Beams per window unless STT_BEAM_SIZE says otherwise: 1 (greedy), chosen by
 * rule on the held-out set's test half (the cheapest configuration within 0.3
 * WER points of faster-whisper's default; beam 5 when none holds), read as
 * decision 059 fixed it, against every faster-whisper-default run on the
 * machine the eval runs on: on the AMD EPYC with AVX-512 VNNI (seven runs)
 * greedy is -0.07 points and holds (decision 063; on the Intel Xeon, one run,
 * it failed: 061). Beam 5 is documented beside it, with its cost:
 * docs/performance.md, "The default".
 */
export const DEFAULT_BEAM_SIZE: number = 1; // typed wide: reports name it as greedy or beam N

export function loadConfig(env: Env = process.env): Config {
  // The CPUs this process may run on, at most its container's CPU quota (src/stt/local/cpu-quota.ts).
  const cores = usableCores(os.availableParallelism(), ownQuotaReader()());
  const dataDir = writableDir('STT_DATA_DIR', path.resolve(env.STT_DATA_DIR || './data'));
  const modelsDir = writableDir('STT_MODELS_DIR', path.resolve(env.STT_MODELS_DIR || path.join(dataDir, 'models')));
  const parallel = int(env, 'STT_PARALLEL', 1, 1, 64);
  // Unset, one thread per core, and at least one per slot (a quota may leave fewer cores than slots asked for).
  const threads = int(env, 'STT_THREADS', Math.max(cores, parallel), 1, 1024);
  if (parallel > threads) throw new ConfigError('STT_PARALLEL', `cannot exceed STT_THREADS (${threads})`);
  // Every computing slot and every paused job holds a libuv pool thread;
  // WAV decoding, SQLite and fs need the rest. The pool is the process's own,
  // whatever env was passed in.
  const threadpoolSize = Math.min(1024, Math.max(1, Number(process.env.UV_THREADPOOL_SIZE) || 4));
  if (parallel + POOL_SPARE > threadpoolSize) {
    throw new ConfigError('STT_PARALLEL', `${parallel} slots need a libuv pool of at least ${parallel + POOL_SPARE} threads ` +
      `(${POOL_SPARE} spare for WAV decoding and SQLite), but UV_THREADPOOL_SIZE is ${threadpoolSize}`);
  }
  const logLevel = (env.LOG_LEVEL || 'info') as Config['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `expected one of ${LOG_LEVELS.join(', ')}`);
  const host = env.HOST || '127.0.0.1';
  const allowInsecureLoopback = bool(env, 'STT_ALLOW_INSECURE_LOOPBACK');
  const modelBaseUrl = env.STT_MODEL_BASE_URL || DEFAULT_MODEL_BASE_URL;
  const urlProblem = checkRemoteUrl(modelBaseUrl, allowInsecureLoopback);
  if (urlProblem) throw new ConfigError('STT_MODEL_BASE_URL', `${urlProblem}, got "${modelBaseUrl}"`);
  const vadModelUrl = env.STT_VAD_MODEL_URL || DEFAULT_VAD_MODEL_URL;
  const vadUrlProblem = checkRemoteUrl(vadModelUrl, allowInsecureLoopback);
  if (vadUrlProblem) throw new ConfigError('STT_VAD_MODEL_URL', `${vadUrlProblem}, got "${vadModelUrl}"`);
  const headersTimeoutMs = int(env, 'STT_HEADERS_TIMEOUT_MS', 30_000, 100, 600_000);
  const uploadTimeoutMs = int(env, 'STT_UPLOAD_TIMEOUT_MS', 300_000, 100, 86_400_000);
  if (headersTimeoutMs > uploadTimeoutMs) throw new ConfigError('STT_HEADERS_TIMEOUT_MS', `cannot exceed STT_UPLOAD_TIMEOUT_MS (${uploadTimeoutMs})`);
  const adminKey = env.STT_ADMIN_KEY?.trim() || null;
  if (adminKey !== null && adminKey.length < 16) throw new ConfigError('STT_ADMIN_KEY', 'must be at least 16 characters');
  const metrics = metricsAccess(env.STT_METRICS);
  const metricsToken = env.STT_METRICS_TOKEN?.trim() || null;
  if (metricsToken !== null) {
    if (metricsToken.length < 16) throw new ConfigError('STT_METRICS_TOKEN', 'must be at least 16 characters');
    // Set beside public or off it would guard nothing: say so rather than let the host think it does.
    if (metrics !== 'admin') throw new ConfigError('STT_METRICS_TOKEN', `only applies with STT_METRICS=admin (it is ${metrics})`);
    if (metricsToken === adminKey) throw new ConfigError('STT_METRICS_TOKEN', 'must differ from STT_ADMIN_KEY');
  }
  const secretKey = env.STT_SECRET_KEY?.trim() || null;
  if (secretKey !== null && !/^[0-9a-fA-F]{64}$/.test(secretKey)) {
    throw new ConfigError('STT_SECRET_KEY', 'must be 64 hex characters (32 bytes)');
  }
  const databaseUrl = env.STT_DATABASE_URL?.trim() || null;
  if (databaseUrl !== null) {
    if (!/^postgres(ql)?:\/\//.test(databaseUrl)) throw new ConfigError('STT_DATABASE_URL', 'must be a postgres:// or postgresql:// URL');
    // Each replica would otherwise make its own key file and none could open the others' provider keys.
    if (secretKey === null) throw new ConfigError('STT_SECRET_KEY', 'must be set (the same on every replica) when STT_DATABASE_URL is');
  }
  const queueCapacity = int(env, 'STT_QUEUE_CAPACITY', 16, 0, 10000);
  return {
    port: int(env, 'PORT', 8080, 0, 65535),
    host,
    dataDir,
    modelsDir,
    adminKey,
    threads,
    parallel,
    queueCapacity,
    // Half: one key's burst leaves the other half of the queue to everyone else.
    openAiModelNames: modelNames(env.STT_OPENAI_MODEL_NAMES),
    queuePerKey: int(env, 'STT_QUEUE_PER_KEY', Math.max(1, Math.ceil(queueCapacity / 2)), 1, 10000),
    maxUploadBytes: int(env, 'STT_MAX_UPLOAD_BYTES', 26214400, 1024, 2 ** 31),
    // At most the 2^31 - 1 samples at 16 kHz the engines count in an int (about 37 hours).
    maxAudioSeconds: int(env, 'STT_MAX_AUDIO_SECONDS', 3600, 1, 134_217),
    // A job's recording is decoded whole (about 230 MB of samples an hour) before its pieces are transcribed.
    maxJobUploadBytes: int(env, 'STT_MAX_JOB_UPLOAD_BYTES', 512 * 1024 * 1024, 1024, 2 ** 31 - 1), // fs.readFile's limit
    maxJobAudioSeconds: int(env, 'STT_MAX_JOB_AUDIO_SECONDS', 7200, 1, 134_217),
    jobRetentionHours: int(env, 'STT_JOB_RETENTION_HOURS', 24, 1, 24 * 365),
    maxJobsPerKey: int(env, 'STT_MAX_JOBS_PER_KEY', 20, 1, 100_000),
    jobLeaseSeconds: int(env, 'STT_JOB_LEASE_SECONDS', 30, 3, 3600),
    spoolDir: path.resolve(env.STT_SPOOL_DIR || path.join(dataDir, 'spool')),
    spoolMinFreeBytes: int(env, 'STT_SPOOL_MIN_FREE_MB', 1024, 0, 1024 ** 3) * 1024 * 1024,
    modelBaseUrl,
    logLevel,
    encoderWindow: encoderWindow(env),
    vad: bool(env, 'STT_VAD'),
    speechGate: env.STT_SPEECH_GATE === undefined ? true : bool(env, 'STT_SPEECH_GATE'),
    vadModelUrl,
    scheduling: scheduling(env.STT_SCHEDULING),
    maxTokens: int(env, 'STT_MAX_TOKENS', 0, 0, 100000),
    temperatureFallback: env.STT_TEMPERATURE_FALLBACK === undefined ? true : bool(env, 'STT_TEMPERATURE_FALLBACK'),
    beamSize: int(env, 'STT_BEAM_SIZE', DEFAULT_BEAM_SIZE, 1, 8),
    followFreeCores: env.STT_FOLLOW_FREE_CORES === undefined ? true : bool(env, 'STT_FOLLOW_FREE_CORES'),
    deadlineBaseMs: int(env, 'STT_DEADLINE_BASE_MS', 60000, 100, 3_600_000),
    deadlinePerAudioSecondMs: int(env, 'STT_DEADLINE_PER_AUDIO_SECOND_MS', 3000, 0, 600_000),
    shutdownTimeoutMs: int(env, 'STT_SHUTDOWN_TIMEOUT_MS', 30000, 0, 3_600_000),
    providerTimeoutBaseMs: int(env, 'STT_PROVIDER_TIMEOUT_BASE_MS', 30000, 100, 3_600_000),
    providerTimeoutPerAudioSecondMs: int(env, 'STT_PROVIDER_TIMEOUT_PER_AUDIO_SECOND_MS', 1000, 0, 600_000),
    secretKey,
    databaseUrl,
    storeGraceSeconds: int(env, 'STT_STORE_GRACE_S', DEFAULT_STORE_GRACE_S, 0, 86_400),
    allowedHosts: allowedHosts(env.STT_ALLOWED_HOSTS, host),
    allowInsecureLoopback,
    allowUnpinnedModels: bool(env, 'STT_ALLOW_UNPINNED_MODELS'),
    allowPrivateAddresses: bool(env, 'STT_ALLOW_PRIVATE_ADDRESSES'),
    callbackAllowPrivate: bool(env, 'STT_CALLBACK_ALLOW_PRIVATE_ADDRESSES'),
    providerConcurrency: int(env, 'STT_PROVIDER_CONCURRENCY', 16, 1, 10000),
    headersTimeoutMs,
    uploadTimeoutMs,
    idleTimeoutMs: int(env, 'STT_IDLE_TIMEOUT_MS', 30_000, 100, 3_600_000),
    maxConnections: int(env, 'STT_MAX_CONNECTIONS', 64, 1, 100_000),
    realtimeMaxSessions: int(env, 'STT_REALTIME_MAX_SESSIONS', 16, 0, 10_000),
    realtimeSessionsPerKey: int(env, 'STT_REALTIME_SESSIONS_PER_KEY', 4, 1, 10_000),
    realtimeIdleMs: int(env, 'STT_REALTIME_IDLE_TIMEOUT_MS', 30_000, 100, 3_600_000),
    realtimeDrafts: env.STT_REALTIME_DRAFTS === undefined ? true : bool(env, 'STT_REALTIME_DRAFTS'),
    wyomingPort: env.STT_WYOMING_PORT === undefined || env.STT_WYOMING_PORT.trim() === '' ? null : int(env, 'STT_WYOMING_PORT', 0, 0, 65535),
    wyomingHost: env.STT_WYOMING_HOST?.trim() || '127.0.0.1',
    defaultModel: defaultModel(env.STT_DEFAULT_MODEL),
    threadpoolSize,
    maxPaused: Math.min(parallel, threadpoolSize - parallel - POOL_SPARE),
    metrics,
    metricsToken,
  };
}

function metricsAccess(raw: string | undefined): Config['metrics'] {
  const value = raw?.trim() || 'admin';
  if (value !== 'off' && value !== 'admin' && value !== 'public') throw new ConfigError('STT_METRICS', `expected off, admin or public, got "${value}"`);
  return value;
}

/** STT_ENCODER_WINDOW, DEFAULT_ENCODER_WINDOW when unset. */
function encoderWindow(env: Env): EncoderWindow {
  // The older switch chose a window that is gone: say so rather than silently serving another one.
  if (env.STT_SHRINK_ENCODER_WINDOW !== undefined) {
    throw new ConfigError('STT_SHRINK_ENCODER_WINDOW', 'was removed with the `shrink` window; use STT_ENCODER_WINDOW (full or tail) instead');
  }
  const raw = env.STT_ENCODER_WINDOW?.trim();
  if (raw) {
    const policy = ENCODER_WINDOWS.find((w) => w === raw);
    if (!policy) throw new ConfigError('STT_ENCODER_WINDOW', `expected ${ENCODER_WINDOWS.join(', ')}, got "${raw}"`);
    return policy;
  }
  return DEFAULT_ENCODER_WINDOW;
}

function scheduling(raw: string | undefined): SchedulingOrder {
  const value = raw?.trim() || 'shortest-first';
  if (value !== 'shortest-first' && value !== 'arrival') throw new ConfigError('STT_SCHEDULING', `expected shortest-first or arrival, got "${value}"`);
  return value;
}

function defaultModel(raw: string | undefined): string | null {
  const v = (raw ?? '').trim() || 'whisper-base';
  if (v === 'none') return null;
  if (!runtimeById(v)) throw new ConfigError('STT_DEFAULT_MODEL', `expected a catalogue runtime id or "none", got "${v}"`);
  return v;
}

/** The bound address, localhost and the loopback addresses unless STT_ALLOWED_HOSTS says otherwise. */
/**
 * OpenAI's transcription model names, so that an app written for OpenAI works
 * unchanged: what it sends as `model` is answered by the public model. An
 * empty value turns this off (then only the host's aliases are accepted).
 */
export const OPENAI_MODEL_NAMES = ['whisper-1', 'gpt-4o-transcribe', 'gpt-4o-mini-transcribe', 'gpt-transcribe'];

function modelNames(raw: string | undefined): string[] {
  if (raw === undefined) return OPENAI_MODEL_NAMES;
  const names = raw.split(',').map((n) => n.trim()).filter(Boolean);
  for (const n of names) {
    if (!/^[A-Za-z0-9._:/-]{1,100}$/.test(n)) throw new ConfigError('STT_OPENAI_MODEL_NAMES', `"${n}" is not a model name`);
  }
  return names;
}

function allowedHosts(raw: string | undefined, host: string): string[] | null {
  if (raw !== undefined && raw.trim() !== '') {
    const names = raw.split(',').map((h) => h.trim().toLowerCase()).filter(Boolean);
    if (names.includes('*')) return null;
    for (const n of names) {
      if (!/^\.?[a-z0-9.:_-]+$/.test(n)) throw new ConfigError('STT_ALLOWED_HOSTS', `"${n}" is not a host name or address`);
    }
    return names;
  }
  return [...new Set([host.toLowerCase().replace(/^\[|\]$/g, ''), 'localhost', '127.0.0.1', '::1'])];
}
