// Decodes an uploaded audio file (any format src/audio/decode-audio.ts reads, sniffed from the bytes) for the target that will transcribe it, holding no more memory
// than that target needs:
// - at most `slots.size` decodes at once: each holds a pool thread, the
//   upload, its PCM (64 kB per second of audio) and the decoder's buffers;
// - never more than `maxSeconds` of audio: refused from the header where the
//   format states its length, otherwise decoding stops there;
// - Local: the whole file becomes 16-kHz PCM;
// - Cloud: the provider is sent the audio as measured (forwarded-audio.ts).
//   A WAV is checked by decoding its header and first second (its duration
//   is the header's); other formats are decoded whole to measure them (the
//   PCM is dropped).
import type { DecodedAudio } from '../native';
import { decodeAudio } from '../audio/decode-audio';
import type { Semaphore } from './semaphore';
import { wavPrefix, type WavHeader } from './wav-header';
import { forwardedAudio } from './forwarded-audio';

const CHECKED_SECONDS = 1;

export interface DecodedUpload {
  /** Null for a cloud target. */
  pcm: Float32Array | null;
  /** What a cloud target is sent (forwarded-audio.ts); null for a local one. */
  forward: Buffer | null;
  durationSeconds: number;
  /** What the upload was (wav, mp3, flac, ogg, webm), for the provider's file name. */
  container: string;
  /** The codec in it (pcm_s16, mp3, flac, opus, vorbis), for the log. */
  codec: string;
}

export interface DecodeOptions {
  header: WavHeader | null;
  mode: 'local' | 'cloud';
  slots: Semaphore;
  /** Stops the wait for a slot (a client gone). */
  signal: AbortSignal;
  /** STT_MAX_AUDIO_SECONDS. */
  maxSeconds: number;
  decode?: (bytes: Uint8Array, maxSeconds: number) => Promise<DecodedAudio>;
}

/** Rejects with the decoder's WavError, or AbortedError when `signal` fires while waiting for a slot. */
export async function decodeUpload(upload: Buffer, { header, mode, slots, signal, maxSeconds, decode = decodeAudio }: DecodeOptions): Promise<DecodedUpload> {
  await slots.acquire(signal);
  try {
    const prefix = mode === 'cloud' && header ? wavPrefix(upload, header, CHECKED_SECONDS) : null;
    if (prefix && header) {
      const checked = await decode(prefix, maxSeconds);
      return { pcm: null, forward: forwardedAudio(upload, 'wav', header, null), durationSeconds: header.durationSeconds, container: 'wav', codec: checked.codec };
    }
    const audio = await decode(upload, maxSeconds);
    // A Matroska file that holds Opus (the only codec read from one) is what providers read as WebM.
    const container = audio.container === 'matroska' ? 'webm' : audio.container;
    const local = mode === 'local';
    return {
      pcm: local ? audio.pcm : null,
      forward: local ? null : forwardedAudio(upload, container, header, audio.pcm),
      durationSeconds: audio.durationSeconds,
      container,
      codec: audio.codec,
    };
  } finally {
    slots.release();
  }
}
