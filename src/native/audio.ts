// Audio through the addon: whole files decoded to 16-kHz mono, resampling
// fed in pieces (for the decoders that run in JavaScript), and Silero over
// live audio.
import { addon } from './binding';
import type { DecodedAudio, Resampler, VadStream } from './types';

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

export function createResampler(inputRate: number): Resampler {
  return new addon.Resampler(inputRate);
}

/** Samples per VadStream frame: 32 ms at 16 kHz. */
export const VAD_FRAME = 512;
/** Throws an Error if the model file cannot be loaded. */
export function createVadStream(modelPath: string): VadStream {
  return new addon.VadStream(modelPath);
}
