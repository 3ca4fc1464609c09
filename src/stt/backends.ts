// The backends a transcription can go to (the active local runtime, or a
// cloud provider) and the routing state that selects them, read once per
// request (route()); src/stt/plan.ts decides from it. Also owns the public alias.
import { isNonSpeechAnnotation, withoutAnnotations } from './non-speech';
import { guardWarnings } from './guard-warnings';
import type { SettingsStore, Routing } from '../store/settings';
import type { LocalEngine } from './local/engine';
import type { OutputTranscription } from './formats';
import type { Transcription } from '../native';
import type { CloudService } from './cloud/service';
import type { CloudRequest } from './cloud/adapter';
import { localCapabilities, type Capabilities } from './capabilities';

export const LOCAL_ALIAS = 'service-local-stt';

/** What the transcription route checks a request against: the routed backend's names and capabilities. */
export interface Target extends Capabilities {
  mode: 'local' | 'cloud';
  alias: string;
  /** More names the host lets clients send for it (routing's aliases). */
  aliases: readonly string[];
  /** Its name in a refusal: the runtime or provider. */
  name: string;
}

/** A provider and one of its models. */
export interface CloudTarget {
  providerId: string;
  model: string;
}

/** One reading of the routing state, for one request. */
export interface Route {
  target: Target;
  /** Cloud mode: the provider and model every request goes to. */
  cloud: CloudTarget | null;
  /** Local mode with spill-over set: where a request the local runtime cannot take in time may go. */
  spillover: (CloudTarget & { maxWaitSeconds: number | null }) | null;
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
  /**
   * Called when work begins: the local job leaves the queue, or the provider
   * is called. From then the audio is charged even if the client leaves.
   */
  onStart?: () => void;
  /** include[]=logprobs: each text token's log-probability (local Whisper only). */
  logprobs?: boolean;
  /** The provider the request was planned for (Cloud mode, or spilled); null: the local runtime. */
  cloud: CloudTarget | null;
  /** A draft of a live turn (the local runtime only): see LocalRequest.draft. */
  draft?: boolean;
}

export class Backends {
  private routing: Routing | null = null;

  constructor(
    private readonly settings: SettingsStore,
    readonly local: LocalEngine,
    private readonly cloud: CloudService | null,
    /** OpenAI's model names, answered as the public model out of the box (STT_OPENAI_MODEL_NAMES). */
    private readonly openAiNames: readonly string[] = [],
  ) {}

  /** Names a request may send for the public model: the host's aliases, then OpenAI's. */
  private aliasesOf(r: Routing): string[] {
    return [...new Set([...r.aliases, ...this.openAiNames])];
  }

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
    return [...new Set([await this.publicModel(), ...this.aliasesOf(r)])];
  }

  /** The routing state once, with the routed backend's capabilities. */
  async route(): Promise<Route> {
    const r = await this.current();
    if (r.mode === 'cloud' && r.cloud && this.cloud) {
      const caps = await this.cloud.capabilities(r.cloud.providerId);
      const alias = await this.cloud.aliasFor(r.cloud.providerId, r.cloud.model);
      const target: Target = { mode: 'cloud', alias, aliases: this.aliasesOf(r), name: `The provider "${r.cloud.providerId}"`, ...caps };
      return { target, cloud: { providerId: r.cloud.providerId, model: r.cloud.model }, spillover: null };
    }
    const spec = this.local.activeRuntime();
    const target: Target = { mode: 'local', alias: LOCAL_ALIAS, aliases: this.aliasesOf(r), name: `The local runtime ${spec?.id ?? ''}`.trimEnd(), ...localCapabilities(spec) };
    return { target, cloud: null, spillover: r.mode === 'local' && r.spillover && this.cloud ? { ...r.spillover } : null };
  }

  /** The provider's capabilities, for a spill-over target; null when it cannot take a request this instant. */
  async spillCapabilities(providerId: string): Promise<Capabilities | null> {
    if (!this.cloud || !(await this.cloud.canServe(providerId))) return null;
    return this.cloud.capabilities(providerId);
  }

  /**
   * Runs the request where it was planned. Local runtimes only: `queueMs`, time spent waiting for the
   * scheduler; `threads` and `decoderThreads`, what the scheduler gave the job (the decoder's follow the free cores).
   */
  async transcribe(input: TranscribeInput): Promise<{ result: OutputTranscription; runtime: string; queueMs?: number; threads?: number; decoderThreads?: number }> {
    if (input.cloud) {
      if (!this.cloud || !input.wav) throw new Error('a cloud request needs the cloud service and its upload');
      return this.cloud.transcribe(input.cloud.providerId, input.cloud.model, { ...input, wav: input.wav });
    }
    if (!input.pcm) throw new Error('a local request needs its decoded audio');
    const pcm = input.pcm;
    const onText = input.onText;
    const out = await this.local.transcribe({
      pcm,
      durationSeconds: input.durationSeconds,
      signal: input.signal,
      owner: input.owner,
      onStart: input.onStart,
      draft: input.draft,
      chunkingStrategy: input.chunkingStrategy,
      options: {
        ...localOptions(input),
        tokenLogprobs: input.logprobs,
        // Streamed text leaves out what the result will leave out.
        onSegment: onText ? (text) => void (isNonSpeechAnnotation(text) || onText(text)) : undefined,
      },
    });
    return { ...out, result: presentLocal(out.result, input.temperature) };
  }
}

/** The request's fields as the local runtime takes them. */
export function localOptions(r: Pick<TranscribeInput, 'language' | 'task' | 'prompt' | 'temperature' | 'granularities'>) {
  return { language: r.language, translate: r.task === 'translate', prompt: r.prompt, temperature: r.temperature, wordTimestamps: r.granularities.has('word') };
}

/** The local runtime's transcription as clients get it: without annotation-only segments, with the guards' warnings. */
export function presentLocal(raw: Transcription, requestedTemperature = 0): OutputTranscription {
  const { result, dropped } = withoutAnnotations(raw);
  const warnings = guardWarnings(result, dropped, requestedTemperature);
  return warnings.length ? { ...result, warnings } : result;
}
