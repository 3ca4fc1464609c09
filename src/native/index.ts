// The native addon's whole surface, typed: the binding (binding.ts), the
// data it takes and gives (types.ts), audio (audio.ts) and models (model.ts).
// Callers get validated options, AbortSignal support, pausable jobs and typed
// errors; they import from here.
export { inspectModelFile, ModelFileError, type ModelFamily, type ModelFileInfo } from './model-file';
export { ModelLoadError, TranscriptionError, WavError, type TranscriptionErrorCode, type WavErrorCode } from './addon-errors';
export type * from './types';
export { enginesFreedOnJsThread, graphHooks, liveObjects, setLogHandler, systemInfo, whisperPatches, whisperVersion } from './binding';
export { createResampler, createVadStream, decodeAudio, decodeWav, VAD_FRAME } from './audio';
export { abortAllJobs, createJobControl, loadModel, Model, type LoadModelOptions } from './model';
