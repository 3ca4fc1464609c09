// Routes a transcription to whatever the routing state selects: the active
// local runtime, or a cloud provider. Also owns the public alias.
import type { SettingsStore, Routing } from '../store/settings';
import { decodeWav } from '../native';
import { BusyError } from './errors';
import type { LocalEngine } from './local/engine';
import type { OutputTranscription } from './formats';
import type { CloudRequest, CloudService } from './cloud/service';
export type { Task } from './cloud/service';

export const LOCAL_ALIAS = 'service-local-stt';

/** What the transcription route checks a request against. */
export interface Target {
  mode: 'local' | 'cloud';
  alias: string;
  /** More names the host lets clients send for it (routing's aliases). */
  aliases: readonly string[];
  /** Local: the runtime's capabilities; cloud: the provider's. */
  languages: ReadonlySet<string> | null;
  supportsPrompt: boolean;
  supportsWords: boolean;
  /** Takes OpenAI's chunking_strategy (local runtimes: Silero VAD). */
  supportsChunking: boolean;
  /** Can serve /v1/audio/translations (Whisper's translate task, or the provider's translations endpoint). */
  supportsTranslation: boolean;
  /** Its name in a refusal: the runtime or provider. */
  name: string;
}

export interface TranscribeInput extends Omit<CloudRequest, 'wav'> {
  /** Null when the audio was headed for the local runtime: only its PCM is kept. */
  wav: Buffer | null;
  /** Null when the audio was headed for a provider as the uploaded WAV (its PCM is not kept). */
  pcm: Float32Array | null;
  durationSeconds: number;
  signal: AbortSignal;
  /** The API key's id: served fairly against other keys in the local queue. */
  owner?: string;
  /** A Local-mode request the route spilled to the host's spill-over target (with its WAV kept). */
  spillTo?: { providerId: string; model: string };
}

export class SttRouter {
  private routing: Routing | null = null;

  constructor(
    private readonly settings: SettingsStore,
    readonly local: LocalEngine,
    private readonly cloud: CloudService | null,
  ) {}

  async current(): Promise<Routing> {
    this.routing ??= await this.settings.routing();
    return this.routing;
  }

  /** Called after every routing change so the next request sees it. */
  invalidate(routing?: Routing): void {
    this.routing = routing ?? null;
  }

  async publicModel(): Promise<string> {
    const r = await this.current();
    if (r.mode === 'cloud' && r.cloud && this.cloud) return this.cloud.aliasFor(r.cloud.providerId, r.cloud.model);
    return LOCAL_ALIAS;
  }

  /** Model ids /v1/models lists (the public model, then the host's aliases): empty in Local mode with no active runtime. */
  async listedModels(): Promise<string[]> {
    const r = await this.current();
    if (r.mode === 'local' && !r.localModel) return [];
    return [...new Set([await this.publicModel(), ...r.aliases])];
  }

  async target(): Promise<Target> {
    const r = await this.current();
    if (r.mode === 'cloud' && r.cloud && this.cloud) {
      const caps = await this.cloud.capabilities(r.cloud.providerId);
      return { mode: 'cloud', alias: await this.publicModel(), aliases: r.aliases, name: `The provider "${r.cloud.providerId}"`, ...caps };
    }
    const spec = this.local.activeRuntime();
    return {
      mode: 'local',
      alias: LOCAL_ALIAS,
      aliases: r.aliases,
      languages: spec?.languages ?? null,
      supportsPrompt: spec?.supportsPrompt ?? true,
      supportsWords: true,
      supportsChunking: true,
      // No runtime yet: the request gets no_active_model further on, not a refusal of the task.
      supportsTranslation: spec ? spec.family === 'whisper' : true,
      name: `The local runtime ${spec?.id ?? ''}`.trimEnd(),
    };
  }

  /**
   * Where a Local-mode request goes instead when the local runtime cannot
   * take it in time (the host's spill-over target), checked against what
   * that provider can do; null when none is set or its provider cannot serve.
   */
  async spillTarget(): Promise<{ target: Target; providerId: string; model: string; maxWaitSeconds: number | null } | null> {
    const r = await this.current();
    if (r.mode !== 'local' || !r.spillover || !this.cloud) return null;
    const { providerId, model, maxWaitSeconds } = r.spillover;
    if (!(await this.cloud.canServe(providerId))) return null;
    const caps = await this.cloud.capabilities(providerId);
    // The client named the local model: the request is checked against the provider's capabilities, not its name.
    const target: Target = { mode: 'cloud', alias: LOCAL_ALIAS, aliases: r.aliases, name: `The spill-over provider "${providerId}"`, ...caps };
    return { target, providerId, model, maxWaitSeconds };
  }

  /** `queueMs`: time spent waiting for the local scheduler (local runtimes only). */
  async transcribe(input: TranscribeInput): Promise<{ result: OutputTranscription; runtime: string; queueMs?: number }> {
    if (input.spillTo && this.cloud) {
      return this.cloud.transcribe(input.spillTo.providerId, input.spillTo.model, { ...input, wav: input.wav! });
    }
    const r = await this.current();
    if (r.mode === 'cloud' && r.cloud && this.cloud) {
      // Routing switched to cloud after the route let go of the upload.
      if (!input.wav) throw new BusyError('routing_changed', 'The routing changed while this request was prepared; retry.', 1);
      return this.cloud.transcribe(r.cloud.providerId, r.cloud.model, { ...input, wav: input.wav });
    }
    // Routing switched to local after the route dropped the PCM: decode again.
    const pcm = input.pcm ?? (await decodeWav(input.wav!)).pcm;
    return this.local.transcribe({
      pcm,
      durationSeconds: input.durationSeconds,
      signal: input.signal,
      owner: input.owner,
      chunkingStrategy: input.chunkingStrategy,
      options: {
        language: input.language,
        translate: input.task === 'translate',
        prompt: input.prompt,
        temperature: input.temperature,
        wordTimestamps: input.granularities.has('word'),
        onSegment: input.onText,
      },
    });
  }
}
