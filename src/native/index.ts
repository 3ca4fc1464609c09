// The native addon's whole surface, typed. Loads the binary through
// node-gyp-build (a matching prebuild first, then build/Release) and wraps it
// so callers get validated options, AbortSignal support, pausable jobs and
// typed errors.
import path from 'node:path';
import { packageRoot } from '../package-root';
import { inTemperatureRange, TEMPERATURE_RANGE } from './limits';
import { inspectModelFile, ModelFileError, type ModelFamily, type ModelFileInfo } from './model-file';
import { ModelLoadError, TranscriptionError, WavError, type TranscriptionErrorCode, type WavErrorCode } from './addon-errors';

export { ModelFileError, inspectModelFile, type ModelFamily, type ModelFileInfo };
export { ModelLoadError, TranscriptionError, WavError, type TranscriptionErrorCode, type WavErrorCode };

export interface DecodedAudio {
  /** 16 kHz mono samples. */
  pcm: Float32Array;
  /** What the bytes were, sniffed from them: wav, mp3, flac, ogg or webm. */
  container: string;
  /** The codec in it: a WAV sample format, or mp3, flac, opus, vorbis. */
  codec: string;
  sampleRate: number;
  channels: number;
  /** WAV only (0 and "" otherwise). */
  bitsPerSample: number;
  sampleFormat: 'pcm_u8' | 'pcm_s16' | 'pcm_s24' | 'pcm_s32' | 'float32' | 'float64' | 'alaw' | 'mulaw' | '';
  extensible: boolean;
  durationSeconds: number;
}

export interface TranscribeOptions {
  /** ISO-639-1 code; omitted means detect (Whisper). */
  language?: string;
  translate?: boolean;
  prompt?: string;
  temperature?: number;
  /** whisper.cpp's +0.2 temperature retries on low-confidence windows (default true). */
  temperatureFallback?: boolean;
  /** Whisper: beams searched per window at temperature 0 (whisper.cpp's beam search); 1 (default) is greedy. */
  beamSize?: number;
  threads?: number;
  wordTimestamps?: boolean;
  /** Whisper: each text token's bytes and log-probability in `Segment.tokenLogprobs` (OpenAI's include[]=logprobs). */
  tokenLogprobs?: boolean;
  /** Tokens per segment; 0 = the model's own limit. */
  maxTokens?: number;
  /** Encoder window in frames (1500 = 30 s); 0 = full. Shrinking it speeds up short clips at an accuracy cost. */
  audioCtx?: number;
  /** Transcribe only the speech Silero finds; times stay those of the audio sent. */
  vad?: VadOptions;
  /**
   * Whisper, with `vad`: Silero decides whether and where anyone speaks, but
   * the whole audio is decoded as sent (not cut to the speech); audio with no
   * speech is not decoded, and the segments of a 30-s window with less than
   * 0.2 s of speech anywhere in it are dropped: text Whisper wrote into
   * silence or noise. (Per window, not per segment: after a long silence
   * Whisper's timestamps can be seconds early.)
   */
  speechGate?: boolean;
  /**
   * Parakeet: the longest audio transcribed in one pass; longer audio is cut
   * into pieces at pauses. Default (0): the model's own context, 49 s for
   * parakeet-tdt-0.6b-v3. For benchmarks and tests.
   */
  pieceSeconds?: number;
  signal?: AbortSignal;
  /** Lets a scheduler pause and resume this job at safe points (see JobControl). */
  control?: JobControl;
  /**
   * Streaming: called with each segment's text (and its index in the
   * result's segments) as soon as the segment is final: after each 30-s
   * window (Whisper) or each piece (Parakeet). Called exactly once per
   * segment, in order, and always before transcribe() resolves.
   */
  onSegment?: (text: string, index: number) => void;
}

/** Silero VAD (whisper.cpp's). The numbers default to whisper.cpp's own. */
export interface VadOptions {
  /** A Silero ggml file (ggml-silero-v6.2.0.bin). */
  modelPath: string;
  /** Speech probability from which a 32-ms frame counts as speech (0.5). */
  threshold?: number;
  /** Shorter stretches of speech are dropped (250). */
  minSpeechMs?: number;
  /** Silence that ends a stretch of speech (100). */
  minSilenceMs?: number;
  /** Kept before and after each stretch of speech (30). */
  speechPadMs?: number;
}

/**
 * Pauses a running transcription until resume(): after the current node of a
 * ggml graph where the graph hooks are linked in (`graphHooks`, Linux), else
 * at its next safe point between graphs (before an encoder window or a
 * decoded token). Inside a graph, the graph's other threads sleep too instead
 * of spinning at ggml's barrier. The result is the same as an uninterrupted
 * run; only the timing moves. A paused job still holds its model state and
 * one libuv worker thread.
 */
export interface JobControl {
  /**
   * `insideGraph` (for tests): wait only after a graph node while the graph has
   * other threads to park, never between graphs; resume() clears it.
   */
  pause(options?: { insideGraph?: boolean }): void;
  resume(): void;
  /** The job's native work has begun on a pool thread. */
  started(): boolean;
  stats(): JobControlStats;
}

export interface JobControlStats {
  /** The job's thread waits at the pause gate now. */
  waiting: boolean;
  /** Pauses taken inside a ggml graph (after a node) rather than between graphs. */
  parkedInGraph: number;
  /** ggml graph threads parked (asleep) while their job waited inside a graph. */
  workersParked: number;
}

export interface Word {
  word: string;
  start: number;
  end: number;
  probability: number;
}

export interface Segment {
  start: number;
  end: number;
  text: string;
  /** Text tokens only. */
  tokens: number[];
  /** As Whisper reports a segment's tokens: the text with the timestamp tokens around it (Parakeet: the text tokens). */
  tokensWithTimestamps: number[];
  /** Start of the segment's 30-s window in mel frames, 100 per second (Parakeet: 0, one pass). */
  seek: number;
  /** The temperature the segment's window was decoded at, after any fallback. */
  temperature: number;
  avgLogprob: number;
  noSpeechProb: number;
  words?: Word[];
  /** With tokenLogprobs: each text token's bytes (a token may end inside a UTF-8 character) and natural-log probability. */
  tokenLogprobs?: { bytes: Buffer; logprob: number }[];
}

export interface Transcription {
  text: string;
  language: string;
  duration: number;
  segments: Segment[];
  /** VAD or the speech gate heard no speech: nothing was decoded. */
  noSpeech?: boolean;
  /** Segments the speech gate left out: those of 30-s windows it judged silent. */
  gatedSegments?: number;
}

export interface ModelStats {
  statesCreated: number;
  statesIdle: number;
  jobsRunning: number;
  disposed: boolean;
}

/** The former name of TranscriptionError's type, kept so existing imports still compile. */
export type TranscribeError = TranscriptionError;

interface NativeModel {
  readonly family: ModelFamily | null;
  transcribe(pcm: Float32Array, options: object, control?: NativeJobControl): Promise<Transcription>;
  dispose(): Promise<void>;
  stats(): ModelStats;
}

interface NativeJobControl extends JobControl {
  abort(): void;
}

/** The classes the addon constructs its errors from (native/error_classes.cpp). */
interface ErrorClasses {
  WavError: typeof WavError;
  TranscriptionError: typeof TranscriptionError;
  ModelLoadError: typeof ModelLoadError;
}

interface NativeAddon {
  setErrorClasses(classes: ErrorClasses): void;
  loadModel(path: string, family: ModelFamily, externalBytes: number): Promise<NativeModel>;
  decodeWav(bytes: Uint8Array): Promise<DecodedAudio>;
  decodeAudio(bytes: Uint8Array, maxSeconds: number): Promise<DecodedAudio>;
  setLogHandler(handler: ((level: number, line: string) => void) | null): void;
  systemInfo(): string;
  whisperVersion: string;
  /** The ids of our patches to whisper.cpp the addon was built with (cmake/whisper-patches.cmake). */
  whisperPatches: string;
  graphHooks: boolean;
  enginesFreedOnJsThread(): number;
  liveObjects(): LiveObjects;
  JobControl: new () => NativeJobControl;
  Resampler: new (inputRate: number) => Resampler;
  VadStream: new (modelPath: string) => VadStream;
}

function loadAddon(): NativeAddon {
  const root = packageRoot();
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('node-gyp-build')(root) as NativeAddon;
  } catch (err) {
    throw new Error(
      'stt-gateway: the native addon is not built for this platform (' + process.platform + '-' + process.arch + '). ' +
        'Run `npm run build:native` (needs g++, cmake and python3), or install a matching prebuild into prebuilds/. ' +
        `Cause: ${(err as Error).message}`,
    );
  }
}

const addon = loadAddon();
// Once per JS environment (the main thread and each worker get their own addon instance data).
addon.setErrorClasses({ WavError, TranscriptionError, ModelLoadError });

/**
 * Every job in flight. Node's exit joins the libuv pool's threads, and a
 * paused job's thread waits for a resume only this thread could send: without
 * this, process.exit(), an uncaught exception or an unhandled rejection with a
 * job paused would hang forever instead of exiting. Aborting opens every
 * job's gate; each returns at its next node or token.
 */
const liveJobs = new Set<NativeJobControl>();
export function abortAllJobs(): void {
  for (const control of liveJobs) control.abort();
}
process.on('exit', abortAllJobs);

export const whisperVersion: string = addon.whisperVersion;
export const whisperPatches: string = addon.whisperPatches;
/** Whether jobs can pause and abort inside a ggml graph (the Linux link-time hooks), not only between graphs. */
export const graphHooks: boolean = addon.graphHooks;
export const systemInfo = (): string => addon.systemInfo();
/** Engines freed on a JS thread since the addon loaded: stays 0 (they are freed on pool threads). */
export const enginesFreedOnJsThread = (): number => addon.enginesFreedOnJsThread();
/** Native engines (loaded models) and inference states alive now; both fall back when models are disposed. */
export interface LiveObjects {
  engines: number;
  states: number;
}
export const liveObjects = (): LiveObjects => addon.liveObjects();

/** ggml levels: 1 debug, 2 info, 3 warn, 4 error, 5 continuation. */
export function setLogHandler(handler: ((level: number, line: string) => void) | null): void {
  addon.setLogHandler(handler);
}

/** Decodes a WAV file to 16 kHz mono float32. Rejects with a WavError, whose code is stable. */
export function decodeWav(bytes: Uint8Array): Promise<DecodedAudio> {
  return addon.decodeWav(bytes);
}

/**
 * Decodes WAV, MP3 or FLAC, sniffed from the bytes, to 16 kHz mono float32; refuses audio longer than `maxSeconds` (`audio_too_long`)
 * from the header where the format states its length, otherwise by stopping
 * there. Rejects with a WavError, whose code is stable.
 */
export function decodeAudio(bytes: Uint8Array, maxSeconds: number): Promise<DecodedAudio> {
  return addon.decodeAudio(bytes, maxSeconds);
}

/**
 * Resampling to 16 kHz fed in pieces (native/resampler_wrap.cpp), for the
 * decoders that run in JavaScript: push() mono samples at `inputRate`
 * (8000-192000), then finish() once for the output.
 */
export interface Resampler {
  push(samples: Float32Array): void;
  finish(): Float32Array;
  /** Lets go of the buffers without an output (a decode that stopped part-way). */
  free(): void;
}
export function createResampler(inputRate: number): Resampler {
  return new addon.Resampler(inputRate);
}

/** Silero over live audio, its state carried from one piece to the next (native/vad_stream.cpp). */
export interface VadStream {
  /** One speech probability (0..1) per 512-sample frame of 16-kHz `pcm` (a whole number of frames); one call at a time. */
  detect(pcm: Float32Array): Promise<Float32Array>;
  /** Forgets what was heard. */
  reset(): void;
  /** Lets go of the model now (after a piece still being judged). */
  free(): void;
}
/** Samples per VadStream frame: 32 ms at 16 kHz. */
export const VAD_FRAME = 512;
/** Throws an Error if the model file cannot be loaded. */
export function createVadStream(modelPath: string): VadStream {
  return new addon.VadStream(modelPath);
}

/** A fresh control to pass as `transcribe(pcm, { control })`. */
export function createJobControl(): JobControl {
  return new addon.JobControl();
}

export class Model {
  private constructor(
    private readonly native: NativeModel,
    readonly family: ModelFamily,
    readonly file: ModelFileInfo,
  ) {}

  /** @internal */
  static wrap(native: NativeModel, file: ModelFileInfo): Model {
    return new Model(native, file.family, file);
  }

  /** Throws or rejects with a TranscriptionError (see its codes); option errors are TypeError or RangeError. */
  transcribe(pcm: Float32Array, options: TranscribeOptions = {}): Promise<Transcription> {
    const { signal, control: given, onSegment, ...rest } = options;
    if (!(pcm instanceof Float32Array)) throw new TypeError('pcm must be a Float32Array');
    validateOptions(rest);
    if (onSegment !== undefined && typeof onSegment !== 'function') throw new TypeError('onSegment must be a function');
    if (given !== undefined && !(given instanceof addon.JobControl)) throw new TypeError('control must come from createJobControl()');
    const control = (given as NativeJobControl | undefined) ?? new addon.JobControl();
    if (signal?.aborted) control.abort();
    const onAbort = (): void => control.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    liveJobs.add(control);
    const segments = onSegment ? new SegmentFeed(onSegment, control) : null;
    const failed = () => {
      if (segments?.failure) throw segments.failure.error;
    };
    return this.native.transcribe(pcm, segments ? { ...rest, onSegment: segments.push } : rest, control)
      .then(
        (result) => {
          segments?.finish(result);
          failed();
          return result;
        },
        (err) => {
          failed();
          throw err;
        },
      )
      .finally(() => {
        segments?.close();
        liveJobs.delete(control);
        signal?.removeEventListener('abort', onAbort);
      });
  }

  stats(): ModelStats {
    return this.native.stats();
  }

  /**
   * Aborts jobs in flight and frees the model once the last of them has
   * returned, on a pool thread. Settles when this object's hold is dropped;
   * callers need not wait for it.
   */
  dispose(): Promise<void> {
    return this.native.dispose();
  }
}

/**
 * The addon's segment calls arrive through their own queue, which may drain
 * after the job's promise settles: the result's segments not yet delivered
 * are delivered when it resolves, and later calls are dropped, so the caller
 * sees each segment once, in order, before the result. A callback that throws
 * ends the job: it is aborted and transcribe() rejects with what was thrown.
 */
class SegmentFeed {
  private delivered = 0;
  private closed = false;
  failure: { error: unknown } | null = null;

  constructor(
    private readonly onSegment: (text: string, index: number) => void,
    private readonly control: NativeJobControl,
  ) {}

  readonly push = (index: number, text: string): void => {
    if (this.closed || index !== this.delivered) return;
    this.delivered++;
    try {
      this.onSegment(text, index);
    } catch (error) {
      this.failure = { error };
      this.closed = true;
      this.control.abort();
    }
  };

  finish(result: Transcription): void {
    while (!this.closed && this.delivered < result.segments.length) this.push(this.delivered, result.segments[this.delivered].text);
  }

  close(): void {
    this.closed = true;
  }
}

function validateOptions(o: Omit<TranscribeOptions, 'signal'>): void {
  const intIn = (v: unknown, name: string, min: number, max: number): void => {
    if (v === undefined) return;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      throw new RangeError(`${name} must be an integer in ${min}..${max}`);
    }
  };
  intIn(o.threads, 'threads', 1, 256);
  intIn(o.maxTokens, 'maxTokens', 0, 100000);
  intIn(o.beamSize, 'beamSize', 1, 8);
  intIn(o.audioCtx, 'audioCtx', 0, 100000);
  if (o.temperature !== undefined && !(typeof o.temperature === 'number' && inTemperatureRange(o.temperature))) {
    throw new RangeError(`temperature must be a number in ${TEMPERATURE_RANGE.min}..${TEMPERATURE_RANGE.max}`);
  }
  if (o.language !== undefined && !/^[a-z]{2,3}$/.test(o.language)) throw new RangeError('language must be an ISO-639-1 code');
  if (o.pieceSeconds !== undefined && !(typeof o.pieceSeconds === 'number' && (o.pieceSeconds === 0 || (o.pieceSeconds >= 1 && o.pieceSeconds <= 100_000)))) {
    throw new RangeError('pieceSeconds must be 0 (the model\'s context) or a number of seconds in 1..100000');
  }
  if (o.speechGate && o.vad === undefined) throw new TypeError('speechGate needs vad (the Silero model it listens with)');
  if (o.vad !== undefined) {
    if (typeof o.vad?.modelPath !== 'string' || o.vad.modelPath === '') throw new TypeError('vad.modelPath must name a Silero model file');
    if (o.vad.threshold !== undefined && !(typeof o.vad.threshold === 'number' && o.vad.threshold >= 0 && o.vad.threshold <= 1)) {
      throw new RangeError('vad.threshold must be a number in 0..1');
    }
    intIn(o.vad.minSpeechMs, 'vad.minSpeechMs', 0, 60_000);
    intIn(o.vad.minSilenceMs, 'vad.minSilenceMs', 0, 60_000);
    intIn(o.vad.speechPadMs, 'vad.speechPadMs', 0, 60_000);
  }
}

export interface LoadModelOptions {
  /** Rejects unless the file is of this family. */
  family?: ModelFamily;
}

/** Checks the file's structure (ModelFileError), then loads it on the thread pool (ModelLoadError). */
export async function loadModel(file: string, options: LoadModelOptions = {}): Promise<Model> {
  const info = await inspectModelFile(file);
  if (options.family && info.family !== options.family) {
    throw new ModelFileError('model_file_foreign', `expected a ${options.family} model, found ${info.family}`);
  }
  const native = await addon.loadModel(path.resolve(file), info.family, info.bytes);
  return Model.wrap(native, info);
}
