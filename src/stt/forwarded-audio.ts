// What a cloud provider is sent for an upload: never more audio than was
// measured and charged here. A WAV goes as its fmt chunk and the one data
// chunk that was measured (ffmpeg, behind most providers, goes on to a second
// data chunk the decoder here never reads), or, when its header could not be
// read apart from the decoder, as a WAV made from the samples decoded. Every
// other format goes as uploaded: the decoders here stop where the stream
// does, as the providers' do.
import type { WavHeader } from './wav-header';

/** The WAV as measured: its fmt chunk and the data chunk the header was read from, nothing else. */
export function measuredWav(wav: Buffer, header: WavHeader): Buffer {
  const dataBytes = Math.min(header.dataBytes, wav.length - header.dataOffset);
  const fmtChunk = 8 + header.fmtBytes + (header.fmtBytes & 1);
  const out = Buffer.alloc(12 + fmtChunk + 8 + dataBytes);
  out.write('RIFF', 0, 'latin1');
  out.writeUInt32LE(out.length - 8, 4);
  out.write('WAVE', 8, 'latin1');
  wav.copy(out, 12, header.fmtOffset - 8, header.fmtOffset + header.fmtBytes);
  out.write('data', 12 + fmtChunk, 'latin1');
  out.writeUInt32LE(dataBytes, 12 + fmtChunk + 4);
  wav.copy(out, 12 + fmtChunk + 8, header.dataOffset, header.dataOffset + dataBytes);
  return out;
}

/** 16-kHz mono samples as a 16-bit PCM WAV. */
export function wavFromPcm(pcm: Float32Array): Buffer {
  const out = Buffer.alloc(44 + pcm.length * 2);
  out.write('RIFF', 0, 'latin1');
  out.writeUInt32LE(out.length - 8, 4);
  out.write('WAVEfmt ', 8, 'latin1');
  out.writeUInt32LE(16, 16);
  out.writeUInt16LE(1, 20); // PCM
  out.writeUInt16LE(1, 22); // mono
  out.writeUInt32LE(16000, 24);
  out.writeUInt32LE(32000, 28); // bytes per second
  out.writeUInt16LE(2, 32); // block align
  out.writeUInt16LE(16, 34); // bits
  out.write('data', 36, 'latin1');
  out.writeUInt32LE(pcm.length * 2, 40);
  for (let i = 0; i < pcm.length; i++) out.writeInt16LE(Math.round(Math.max(-1, Math.min(1, pcm[i])) * 32767), 44 + i * 2);
  return out;
}

/** What the provider gets for `upload`, given what it was and its header (a WAV's, or null). */
export function forwardedAudio(upload: Buffer, container: string, header: WavHeader | null, pcm: Float32Array | null): Buffer {
  if (container !== 'wav') return upload;
  if (header) return measuredWav(upload, header);
  if (!pcm) throw new Error('forwardedAudio: a WAV without a readable header needs its decoded samples');
  return wavFromPcm(pcm);
}
