// Decodes an uploaded WAV for the target that will transcribe it, holding no
// more memory than that target needs:
// - at most `slots.size` decodes at once: each holds a pool thread, the
//   upload, its PCM (64 kB per second of audio) and the decoder's buffers;
// - Local: the whole file becomes 16-kHz PCM;
// - Cloud: the provider is sent the upload itself, so only the header and the
//   first second are decoded, which checks the format as the local path
//   does; the duration comes from the header.
import { decodeWav, type DecodedAudio } from '../native';
import type { Semaphore } from './semaphore';
import { wavPrefix, type WavHeader } from './wav-header';

const CHECKED_SECONDS = 1;

export interface DecodedUpload {
  /** Null for a cloud target. */
  pcm: Float32Array | null;
  durationSeconds: number;
}

export interface DecodeOptions {
  header: WavHeader | null;
  mode: 'local' | 'cloud';
  slots: Semaphore;
  /** Stops the wait for a slot (a client gone). */
  signal: AbortSignal;
  decode?: (bytes: Uint8Array) => Promise<DecodedAudio>;
}

/** Rejects with the decoder's WavError, or AbortedError when `signal` fires while waiting for a slot. */
export async function decodeUpload(wav: Buffer, { header, mode, slots, signal, decode = decodeWav }: DecodeOptions): Promise<DecodedUpload> {
  await slots.acquire(signal);
  try {
    const prefix = mode === 'cloud' && header ? wavPrefix(wav, header, CHECKED_SECONDS) : null;
    if (prefix && header) {
      await decode(prefix);
      return { pcm: null, durationSeconds: header.durationSeconds };
    }
    const audio = await decode(wav);
    return { pcm: mode === 'local' ? audio.pcm : null, durationSeconds: audio.durationSeconds };
  } finally {
    slots.release();
  }
}
