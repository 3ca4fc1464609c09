// The errors the native addon throws and rejects with. binding.ts hands these
// classes to the addon once, when it loads it, and the addon constructs
// instances of them (`new Class(message, code)`), so callers test a native
// error with instanceof. `code` is stable (callers and tests match on it);
// the message says what happened.

export type WavErrorCode =
  | 'not_riff_wave'
  | 'truncated_header'
  | 'unsupported_codec'
  | 'unsupported_sample_rate'
  | 'invalid_format'
  | 'no_samples'
  | 'size_out_of_bounds'
  | 'too_long'
  | 'decode_failed'
  // decodeAudio (native/audio/audio_decoder.h): a stream that could not be decoded, more than the limit, a rate or channel count out of range.
  | 'corrupt_audio'
  | 'audio_too_long'
  | 'unsupported_format';

/** decodeWav() or decodeAudio() rejected: the file is not audio the decoders accept, or `decode_failed`, an internal failure. */
export class WavError extends Error {
  constructor(message: string, readonly code: WavErrorCode) {
    super(message);
    this.name = 'WavError';
  }
}

export type TranscriptionErrorCode = 'aborted' | 'disposed' | 'runtime_error';

/**
 * transcribe() rejected or threw: `aborted` (its signal or control aborted
 * it, or the model was disposed while it ran), `disposed` (the model was
 * disposed before), `runtime_error` (whisper.cpp or parakeet.cpp failed).
 */
export class TranscriptionError extends Error {
  constructor(message: string, readonly code: TranscriptionErrorCode) {
    super(message);
    this.name = 'TranscriptionError';
  }
}

/** whisper.cpp or parakeet.cpp could not load a model file that inspectModelFile() had passed. */
export class ModelLoadError extends Error {
  constructor(message: string, readonly code: 'model_load_failed') {
    super(message);
    this.name = 'ModelLoadError';
  }
}
