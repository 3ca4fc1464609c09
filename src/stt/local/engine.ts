// The local runtime: which model is active, loading and switching models
// without dropping requests, and running transcriptions through the scheduler.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../../log';
import { createJobControl, loadModel, TranscriptionError, whisperPatches, type Model, type ResumePoint, type Segment, type Transcription, type TranscribeOptions, type VadOptions } from '../../native';
import { installedFile, runtimeById, VAD_FILE, type RuntimeSpec } from '../catalogue';
import type { ChunkingStrategy } from '../chunking';
import { OwnerShareFullError, QueueFullError, Scheduler } from './scheduler';
import { AbortedError, BackendError, BusyError, cannotTranslate, InvalidInputError, OverShareError, SttError } from '../../domain-errors';
import type { LoadMarker, LoadRecord } from './load-marker';
import type { Metrics } from '../../metrics';
import { encoderWindowFor, type EncoderWindow } from './encoder-window';

export type LocalState = 'none' | 'loading' | 'ready' | 'error';

interface Loaded {
  spec: RuntimeSpec;
  model: Model;
  jobs: number;
  retired: boolean;
}

export interface LocalRequest {
  pcm: Float32Array;
  durationSeconds: number;
  options: Omit<TranscribeOptions, 'signal' | 'threads' | 'decoderThreads' | 'vad'>;
  /** Undefined: VAD as the host set it (STT_VAD). */
  chunkingStrategy?: ChunkingStrategy;
  signal: AbortSignal;
  /** Who sent it (an API key id), for fairness between keys in the queue. */
  owner?: string;
  /** Called when the job leaves the queue and its work begins (from then it is charged, finished or not). */
  onStart?: () => void;
  /**
   * A draft of a live turn still being heard (realtime deltas): greedy, no
   * temperature retries, in the `tail` window, whatever the host set; the
   * turn's own transcription later runs as the host set it.
   */
  draft?: boolean;
  /** A run of a batch job (the jobs API): the scheduler's background lane, behind every other job. */
  background?: boolean;
}

/** A request's resumeFrom was made by another runtime, or with other settings: the run must start over. */
export class StaleCheckpointError extends Error {
  constructor() {
    super('the checkpoint was made by another model or with other settings');
  }
}

export interface LocalEngineOptions {
  modelsDir: string;
  scheduler: Scheduler;
  logger: Logger;
  /** Whisper's encoder window for clips under 30 s (STT_ENCODER_WINDOW). */
  encoderWindow: EncoderWindow;
  /** VAD unless a request asks for it by itself (STT_VAD). */
  vad: boolean;
  /** With the VAD model installed and no VAD asked for: decode everything, drop segments with no speech (STT_SPEECH_GATE). */
  speechGate?: boolean;
  /** Tokens per segment, 0 = the model's limit (STT_MAX_TOKENS). */
  maxTokens: number;
  /** whisper.cpp's temperature retries on low-confidence windows (STT_TEMPERATURE_FALLBACK). */
  temperatureFallback: boolean;
  /** Whisper beams (STT_BEAM_SIZE); 1 is greedy. */
  beamSize: number;
  /** Marks native loads in progress, so a load that kills the process is not repeated at the next start. */
  loadMarker: LoadMarker;
  /** Load times go to stt_model_load_seconds. */
  metrics?: Pick<Metrics, 'modelLoadSeconds'>;
}

export interface LocalStatus {
  activeModel: string | null;
  state: LocalState;
  error: string | null;
  /** The load the previous process died in; that runtime stays unloaded until the host activates a runtime. */
  crashedLoad: LoadRecord | null;
}

export class LocalEngine {
  private current: Loaded | null = null;
  private loadingId: string | null = null;
  private loadError: string | null = null;
  private loadGeneration = 0;
  /** Native loads running now: the marker stays until the last one returns. */
  private loadsInFlight = 0;
  /** Set when shutdown begins (refuseLoads, close): no load starts after it. */
  private loadsRefused = false;
  private crashedLoad: LoadRecord | null;
  private vadMissingLogged = false;
  private vadInstalled = false;
  /** The latest activate(): what ready() waits for. */
  private activation: Promise<void> = Promise.resolve();
  /** How a model file is loaded: the addon's loader; a test may put a gated one in its place. */
  loader: (file: string, opts: { family: RuntimeSpec['family'] }) => Promise<Model> = loadModel;

  constructor(private readonly opts: LocalEngineOptions) {
    // Read before anything can be activated: the marker is this process's own from then on.
    this.crashedLoad = opts.loadMarker.read();
    if (this.crashedLoad) {
      opts.logger.error({ runtime: this.crashedLoad.runtime, file: this.crashedLoad.file, loadStartedAt: this.crashedLoad.startedAt },
        `local runtime not loaded: ${crashMessage(this.crashedLoad)}`);
    }
  }

  get scheduler(): Scheduler {
    return this.opts.scheduler;
  }

  status(): LocalStatus {
    const crashedLoad = this.crashedLoad;
    if (this.loadingId) return { activeModel: this.loadingId, state: 'loading', error: null, crashedLoad };
    if (this.loadError) return { activeModel: null, state: 'error', error: this.loadError, crashedLoad };
    if (this.current) return { activeModel: this.current.spec.id, state: 'ready', error: null, crashedLoad };
    // 'error' also keeps the routing follower (host/follow-routing.ts) from loading it again (it never retries a failed load by itself).
    if (crashedLoad) return { activeModel: null, state: 'error', error: crashMessage(crashedLoad), crashedLoad };
    return { activeModel: null, state: 'none', error: null, crashedLoad };
  }

  /**
   * The host chose a runtime (admin API, settings page, admin CLI): the load
   * that crashed no longer blocks anything, at this start or the next.
   */
  forgetCrashedLoad(): void {
    if (!this.crashedLoad) return;
    this.opts.logger.info({ runtime: this.crashedLoad.runtime }, 'crashed load cleared by the host');
    this.crashedLoad = null;
    if (this.loadsInFlight === 0) this.opts.loadMarker.clear();
  }

  /** The admin CLI clears the marker from its own process; a running server notices here. */
  noticeMarkerCleared(): void {
    if (this.crashedLoad && this.loadsInFlight === 0 && !this.opts.loadMarker.read()) this.forgetCrashedLoad();
  }

  /** The runtime whose model is loaded and takes jobs, if any (the previous one keeps serving while another loads). */
  servingRuntime(): string | null {
    return this.current?.spec.id ?? null;
  }

  activeRuntime(): RuntimeSpec | null {
    return this.current?.spec ?? (this.loadingId ? runtimeById(this.loadingId) ?? null : null);
  }

  /**
   * Loads a runtime and makes it active once ready. The previous model keeps
   * serving meanwhile and is released after its last job.
   */
  activate(id: string): Promise<void> {
    const generation = this.loadGeneration;
    const activation = this.activateNow(id);
    // Only an activation that started a load (its synchronous part moved the generation on) is what ready()
    // waits for: one refused at once (unknown, crashed, shutting down) must not stand in for a load in progress.
    if (this.loadGeneration !== generation) this.activation = activation;
    return activation;
  }

  /** Shutdown has begun: no load starts from now on (its marker could outlive the process and read as a crash at the next start). */
  refuseLoads(): void {
    this.loadsRefused = true;
  }

  /** Resolves with the status once no load is in progress, whatever its outcome. */
  async ready(): Promise<LocalStatus> {
    while (this.loadingId) await this.activation.catch(() => {});
    return this.status();
  }

  private async activateNow(id: string): Promise<void> {
    const spec = runtimeById(id);
    if (!spec) throw new Error(`unknown runtime ${id}`);
    if (this.loadsRefused) throw new Error(`not loading ${id}: the server is shutting down`);
    if (this.crashedLoad?.runtime === id) throw new Error(crashMessage(this.crashedLoad));
    if (this.current?.spec.id === id && !this.loadingId) {
      // Back to the model that kept serving after another one failed to load: that failure is no longer the state.
      this.loadError = null;
      return;
    }
    this.forgetCrashedLoad(); // another runtime: only the host activates one while a crash is on record
    const generation = ++this.loadGeneration;
    this.loadingId = id;
    this.loadError = null;
    const started = Date.now();
    try {
      const file = await installedFile(this.opts.modelsDir, spec);
      if (!file) throw new Error(`runtime ${id} is not installed`);
      // A newer activate() or deactivate() came while the file was looked up: it owns the state now; start no load.
      if (generation !== this.loadGeneration) return;
      // Shutdown began meanwhile: no load (and no marker); thrown, so that loadingId is let go below.
      if (this.loadsRefused) throw new Error(`not loading ${id}: the server is shutting down`);
      const model = await this.markedLoad(spec, file);
      if (generation !== this.loadGeneration) {
        void model.dispose(); // a newer activate() or deactivate() won
        return;
      }
      const previous = this.current;
      this.current = { spec, model, jobs: 0, retired: false };
      this.loadingId = null;
      this.opts.logger.info({ runtime: id, file: file.name, loadMs: Date.now() - started }, 'local runtime ready');
      this.opts.metrics?.modelLoadSeconds.set({ runtime: id }, (Date.now() - started) / 1000);
      if (previous) this.retire(previous);
    } catch (err) {
      if (generation === this.loadGeneration) {
        this.loadingId = null;
        this.loadError = (err as Error).message;
        this.opts.logger.error({ runtime: id, err: (err as Error).message }, 'local runtime failed to load');
      }
      throw err;
    }
  }

  private async markedLoad(spec: RuntimeSpec, file: { name: string; path: string }): Promise<Model> {
    this.opts.loadMarker.write({ runtime: spec.id, file: file.name, startedAt: new Date().toISOString() });
    this.loadsInFlight++;
    this.opts.logger.info({ runtime: spec.id, file: file.name }, 'loading local runtime');
    try {
      return await this.loader(file.path, { family: spec.family });
    } finally {
      // A JS-level failure (a refused file, a loader error) is reported, not a crash.
      if (--this.loadsInFlight === 0) this.opts.loadMarker.clear();
    }
  }

  deactivate(): void {
    this.loadGeneration++;
    this.loadingId = null;
    this.loadError = null;
    if (this.current) this.retire(this.current);
    this.current = null;
  }

  private retire(loaded: Loaded): void {
    loaded.retired = true;
    if (loaded.jobs === 0) void loaded.model.dispose();
  }

  /** Drafts running or queued: any other job but a background one aborts them (a draft is a preview, and gives its slot up at once). */
  private readonly drafts = new Set<AbortController>();

  /** Whether a job submitted now would start at once, delaying nobody but background jobs: drafts run only then. */
  hasIdleSlot(): boolean {
    return this.current !== null && this.opts.scheduler.hasForegroundRoom();
  }

  async transcribe(req: LocalRequest): Promise<{ result: Transcription; runtime: string; queueMs: number; threads: number; decoderThreads: number }> {
    if (!this.current) {
      const { state } = this.status();
      if (state === 'loading') throw new BusyError('model_loading', 'The local model is still loading; retry shortly.', 5);
      throw new BackendError('no_active_model', 'No local speech model is active. The host must activate one in /settings.');
    }
    refuseTranslation(this.current.spec, req);
    const vad = this.vadFor(req.chunkingStrategy);
    this.opts.logger.debug({ audioSeconds: req.durationSeconds, ...this.opts.scheduler.stats() }, 'local job queued');
    const queued = performance.now();
    const draft = req.draft ? new AbortController() : null;
    if (draft) this.drafts.add(draft);
    else if (!req.background) for (const running of this.drafts) running.abort();
    const signal = draft ? AbortSignal.any([req.signal, draft.signal]) : req.signal;
    try {
      return await this.opts.scheduler.submit(req.durationSeconds, signal, async ({ threads, decoderThreads, attach }) => {
        const queueMs = performance.now() - queued;
        const loaded = this.current; // requests move to a newly activated model when they start
        if (!loaded) throw new BackendError('no_active_model', 'No local speech model is active.');
        refuseTranslation(loaded.spec, req);
        req.onStart?.();
        const control = createJobControl();
        // A background job the scheduler evicts is aborted like one whose client left; the scheduler names it EvictedError.
        const evicted = new AbortController();
        attach({ pause: () => control.pause(), resume: () => control.resume(), started: () => control.started(), evict: () => evicted.abort() });
        const { resumeFrom, onCheckpoint, ...requested } = req.options;
        const decoding = {
          maxTokens: this.opts.maxTokens,
          temperatureFallback: this.opts.temperatureFallback,
          beamSize: this.opts.beamSize,
          ...requested,
          ...(req.draft ? { beamSize: 1, temperatureFallback: false } : {}),
          audioCtx: this.audioCtxFor(loaded, req),
          ...(vad ? { vad } : this.speechGateFor(loaded.spec)),
        };
        // A checkpoint resumes only the run that made it: the same runtime, model file and
        // whisper.cpp patches, decoding as it did (the VAD model by name: replicas mount it anywhere).
        const by = JSON.stringify({
          runtime: loaded.spec.id, bytes: loaded.model.file.bytes, ftype: loaded.model.file.ftype, patches: whisperPatches,
          ...decoding, onSegment: undefined, ...(decoding.vad && { vad: { ...decoding.vad, modelPath: path.basename(decoding.vad.modelPath) } }),
        });
        if (resumeFrom && resumeFrom.by !== by) throw new StaleCheckpointError();
        // Every caller (HTTP, jobs, realtime, Wyoming) passes here: the one place that names the
        // cores a job was given, which follow the cores free when it starts.
        this.opts.logger.debug({ runtime: loaded.spec.id, queueMs: Math.round(queueMs), threads, decoderThreads, beamSize: decoding.beamSize, background: req.background ?? false }, 'local job started');
        loaded.jobs++;
        try {
          const result = await loaded.model.transcribe(req.pcm, {
            ...decoding,
            ...(resumeFrom && { resumeFrom }),
            ...(onCheckpoint && { onCheckpoint: (point: ResumePoint, segments: Segment[], gated: number) => onCheckpoint({ ...point, by }, segments, gated) }),
            threads,
            decoderThreads,
            signal: req.background ? AbortSignal.any([signal, evicted.signal]) : signal,
            control,
          });
          return { result, runtime: loaded.spec.id, queueMs, threads, decoderThreads };
        } finally {
          loaded.jobs--;
          if (loaded.retired && loaded.jobs === 0) void loaded.model.dispose();
        }
      }, { owner: req.owner, sampled: !draft, background: req.background });
    } catch (err) {
      if (err instanceof OwnerShareFullError) {
        throw new OverShareError('key_queue_full', keyShareMessage(err.share), err.retryAfterSeconds);
      }
      if (err instanceof QueueFullError) {
        throw new BusyError('queue_full', 'The local transcription queue is full; retry later.', err.retryAfterSeconds);
      }
      if (err instanceof AbortedError || (err instanceof TranscriptionError && err.code === 'aborted')) throw new AbortedError();
      if (err instanceof SttError || err instanceof StaleCheckpointError) throw err;
      this.opts.logger.error({ err: (err as Error).message }, 'local inference failed');
      throw new BackendError('runtime_error', 'The local speech model failed to transcribe the audio.');
    } finally {
      if (draft) this.drafts.delete(draft);
    }
  }

  /**
   * Silero VAD for a request: OpenAI's server_vad fields mapped onto
   * whisper.cpp's (prefix_padding_ms pads each stretch of speech,
   * silence_duration_ms ends one), "auto" and the host's default with
   * whisper.cpp's own values. Without the model file a request that asked
   * for VAD is refused; the host's default falls back to no VAD, logged once.
   */
  private vadFor(chunking: ChunkingStrategy | undefined): VadOptions | undefined {
    if (!chunking && !this.opts.vad) return undefined;
    const modelPath = path.join(this.opts.modelsDir, VAD_FILE.name);
    // Looked for until found (a download or the host may put it in place
    // later), then remembered: no file-system call per request.
    this.vadInstalled ||= existsSync(modelPath);
    if (!this.vadInstalled) {
      if (chunking) {
        throw new InvalidInputError('unsupported_parameter', `chunking_strategy needs the VAD model (${VAD_FILE.name}), which is not installed here.`,
          'chunking_strategy');
      }
      if (!this.vadMissingLogged) {
        this.vadMissingLogged = true;
        this.opts.logger.warn({ file: modelPath }, 'STT_VAD is on but the VAD model is not installed: transcribing without VAD');
      }
      return undefined;
    }
    if (chunking?.type !== 'server_vad') return { modelPath };
    return { modelPath, threshold: chunking.threshold, speechPadMs: chunking.prefixPaddingMs, minSilenceMs: chunking.silenceDurationMs };
  }

  /**
   * The speech gate when no VAD was asked for: Whisper, the host has not
   * turned it off (STT_SPEECH_GATE) and the Silero model is installed (it
   * comes with every model download). Without the model: no gate.
   */
  private speechGateFor(spec: RuntimeSpec): { vad?: VadOptions; speechGate?: boolean } {
    if (!this.opts.speechGate || spec.family !== 'whisper') return {};
    const modelPath = path.join(this.opts.modelsDir, VAD_FILE.name);
    this.vadInstalled ||= existsSync(modelPath);
    return this.vadInstalled ? { vad: { modelPath }, speechGate: true } : {};
  }

  /**
   * Whisper's encoder window: the host's policy for transcriptions (`tail`
   * for drafts, which only have to be cheap), the full
   * 30 s for translations (the window policies were measured on English
   * transcription; base translating a short Spanish clip in a 15-s window
   * looped where the full window did not).
   */
  private audioCtxFor({ spec, model }: Loaded, req: LocalRequest): number {
    if (spec.family !== 'whisper' || req.options.translate) return 0;
    return encoderWindowFor(req.draft ? 'tail' : this.opts.encoderWindow, req.durationSeconds, model.file.hparams.n_audio_ctx);
  }

  /** Waits for running and queued jobs, then frees the model. */
  async close(): Promise<void> {
    this.refuseLoads();
    await this.opts.scheduler.idle();
    this.deactivate();
    // Shutting down on purpose during a load is no crash; the load's own
    // clean-up would not run once the process exits.
    if (this.loadsInFlight > 0) this.opts.loadMarker.clear();
  }
}

/** What a key over its share of the queue is told (the share is STT_QUEUE_PER_KEY). */
export function keyShareMessage(share: number): string {
  return `This API key already has ${share} transcriptions waiting in the local queue, its share of it; retry when one has finished.`;
}

/** Only Whisper has a translate task; Parakeet would transcribe and call it a translation. */
function refuseTranslation(spec: RuntimeSpec, req: LocalRequest): void {
  if (req.options.translate && spec.family !== 'whisper') throw cannotTranslate(`The local runtime ${spec.id}`);
}

function crashMessage(r: LoadRecord): string {
  return `the previous process ended while loading ${r.runtime} (${r.file}, load started ${r.startedAt}), ` +
    'so it is not loaded automatically; activate a runtime in /settings, with PUT /admin/routing or `npm run admin -- runtime activate <id>`';
}
