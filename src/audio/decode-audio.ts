// Every uploaded audio file becomes 16-kHz mono float samples here. The
// container is sniffed from the bytes (never the file name or Content-Type):
// - Ogg (Opus, Vorbis) and WebM/Matroska (Opus): decoded by libopus and
//   libvorbis in WebAssembly on the decoder thread (decoder-thread.ts,
//   decode-compressed.ts);
// - everything else (WAV, MP3, FLAC, and what no decoder reads, which it
//   names): the native addon's decodeAudio, on a libuv pool thread.
// Each refuses audio longer than `maxSeconds` from the container's stated
// length before decoding where it has one, otherwise by stopping there, and
// rejects with a WavError whose code is stable.
import { decodeAudio as decodeNative, type DecodedAudio } from '../native';
import { isOgg } from './ogg-reader';
import { isEbml } from './webm-reader';
import { decodeOnThread } from './decoder-thread';

export function decodeAudio(bytes: Uint8Array, maxSeconds: number): Promise<DecodedAudio> {
  // The addon checks both arguments and throws their TypeError or RangeError.
  if (!(bytes instanceof Uint8Array) || !(maxSeconds > 0) || !Number.isFinite(maxSeconds)) return decodeNative(bytes, maxSeconds);
  return isOgg(bytes) || isEbml(bytes) ? decodeOnThread(bytes, maxSeconds) : decodeNative(bytes, maxSeconds);
}
