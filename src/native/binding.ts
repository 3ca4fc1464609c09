// The N-API surface: the binary loaded through node-gyp-build (a matching
// prebuild first, then build/Release), typed as native/binding/addon.cpp exports it,
// with the error classes it throws registered. Everything else in src/native
// wraps this; nothing outside src/native imports it.
import { packageRoot } from '../package-root';
import type { ModelFamily } from './model-file';
import { ModelLoadError, TranscriptionError, WavError } from './addon-errors';
import type { DecodedAudio, JobControl, LiveObjects, ModelStats, Resampler, Transcription, VadStream } from './types';

export interface NativeModel {
  readonly family: ModelFamily | null;
  transcribe(pcm: Float32Array, options: object, control?: NativeJobControl): Promise<Transcription>;
  dispose(): Promise<void>;
  stats(): ModelStats;
}

export interface NativeJobControl extends JobControl {
  abort(): void;
}

/** The classes the addon constructs its errors from (native/binding/error_classes.cpp). */
interface ErrorClasses {
  WavError: typeof WavError;
  TranscriptionError: typeof TranscriptionError;
  ModelLoadError: typeof ModelLoadError;
}

export interface NativeAddon {
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

export const addon = loadAddon();
// Once per JS environment (the main thread and each worker get their own addon instance data).
addon.setErrorClasses({ WavError, TranscriptionError, ModelLoadError });

export const whisperVersion: string = addon.whisperVersion;
export const whisperPatches: string = addon.whisperPatches;
/** Whether jobs can pause and abort inside a ggml graph (the Linux link-time hooks), not only between graphs. */
export const graphHooks: boolean = addon.graphHooks;
export const systemInfo = (): string => addon.systemInfo();
/** Engines freed on a JS thread since the addon loaded: stays 0 (they are freed on pool threads). */
export const enginesFreedOnJsThread = (): number => addon.enginesFreedOnJsThread();
export const liveObjects = (): LiveObjects => addon.liveObjects();

/** ggml levels: 1 debug, 2 info, 3 warn, 4 error, 5 continuation. */
export function setLogHandler(handler: ((level: number, line: string) => void) | null): void {
  addon.setLogHandler(handler);
}
