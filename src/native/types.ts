// The addon's data as TypeScript sees it: what goes into a transcription and
// what comes out, decoded audio, and the live objects (job controls,
// resamplers, voice-activity streams) it hands back. Types only.
import type { TranscriptionError } from './addon-errors';

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
  /** Whisper: beams searched per window at temperature 0 (whisper.cpp's beam search); 1, the addon's default, is greedy (the server passes STT_BEAM_SIZE, 1 by default). */
  beamSize?: number;
  threads?: number;
  /**
   * Whisper: threads for the decoder's graphs (default `threads`). Fewer when another
   * process holds a core: the decoder's small graphs wait at a barrier after every node.
   */
  decoderThreads?: number;
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
  /**
   * Long recordings: where a stopped run resumes (a point `onCheckpoint`
   * gave it). The rest is decoded as the uninterrupted run would have decoded
   * it, and the result holds the segments from there on.
   */
  resumeFrom?: ResumePoint;
  /**
   * Called, in order, at every point a later run could resume from, with the
   * segments finished since the previous call (or the start) and how many
   * the speech gate left out meanwhile: after each
   * 30-s window (Whisper) or piece (Parakeet) but the last. Calls that would
   * land after transcribe() settles are dropped: the result has every segment.
   */
  onCheckpoint?: (point: ResumePoint, segments: Segment[], gatedSegments: number) => void;
}

/**
 * Opaque to callers, to be stored and given back as `resumeFrom` with the
 * same audio, model and options. Whisper: the next window's start in 10-ms
 * frames, the tokens its prompt is taken from, the token-timestamp clock,
 * the sampling decoders' random-number states and the language decoded in; Parakeet: the sample its next piece starts at.
 */
export interface ResumePoint {
  position: number;
  prompt: number[];
  clock: number[];
  /** Whisper: the temperature fallback's decoders' random-number states, as text. */
  rngs: string[];
  language: string;
  /** How far the run got, in seconds of the audio sent: for progress, not needed to resume. */
  seconds: number;
  /** Who made it, as its caller marks it (src/stt/local/engine.ts: the runtime and its settings); the addon ignores it. */
  by?: string;
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
  /** VAD or the speech gate heard no speech, or there were no samples: nothing was decoded. */
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

/** Native engines (loaded models) and inference states alive now; both fall back when models are disposed. */
export interface LiveObjects {
  engines: number;
  states: number;
}

/**
 * Resampling to 16 kHz fed in pieces (native/binding/resampler_wrap.cpp), for the
 * decoders that run in JavaScript: push() mono samples at `inputRate`
 * (8000-192000), then finish() once for the output.
 */
export interface Resampler {
  push(samples: Float32Array): void;
  finish(): Float32Array;
  /** Lets go of the buffers without an output (a decode that stopped part-way). */
  free(): void;
}

/** Silero over live audio, its state carried from one piece to the next (native/binding/vad_stream.cpp). */
export interface VadStream {
  /** One speech probability (0..1) per 512-sample frame of 16-kHz `pcm` (a whole number of frames); one call at a time. */
  detect(pcm: Float32Array): Promise<Float32Array>;
  /** Forgets what was heard. */
  reset(): void;
  /** Lets go of the model now (after a piece still being judged). */
  free(): void;
}
