// What a WAV's header says about its length, read without decoding: enough to
// refuse a clip that is too long before spending memory and a pool thread on
// it, and to know a cloud clip's duration. Follows the native decoder's rules
// (native/audio/wav_decoder.cpp): chunks from byte 12, word-aligned; a data size of
// 0 or 0xFFFFFFFF means "to the end of the file". Whatever it does not
// understand gives null and is left to the decoder, which says what is wrong.
export interface WavHeader {
  sampleRate: number;
  blockAlign: number;
  /** Where the fmt chunk's body starts, and its size. */
  fmtOffset: number;
  fmtBytes: number;
  /** Where the samples start, and how many bytes of them there are. */
  dataOffset: number;
  dataBytes: number;
  /** Whether the fmt chunk comes before the data chunk, so that a prefix of the file holds both. */
  fmtFirst: boolean;
  durationSeconds: number;
}

export function readWavHeader(wav: Buffer): WavHeader | null {
  if (wav.length < 12 || wav.toString('latin1', 0, 4) !== 'RIFF' || wav.toString('latin1', 8, 12) !== 'WAVE') return null;
  let fmt: { sampleRate: number; blockAlign: number; fmtOffset: number; fmtBytes: number } | null = null;
  let data: { offset: number; bytes: number } | null = null;
  let fmtFirst = false;
  // As the decoder: the first data chunk after fmt; one before fmt counts only if none follows it.
  for (let pos = 12; wav.length - pos >= 8 && !(fmt && data && fmtFirst); ) {
    const id = wav.toString('latin1', pos, pos + 4);
    const size = wav.readUInt32LE(pos + 4);
    const body = pos + 8;
    const available = wav.length - body;
    if (id === 'data' && (size === 0 || size === 0xffffffff)) {
      data = { offset: body, bytes: available }; // a streamed WAV whose writer never patched the size
      fmtFirst = fmt !== null;
      break;
    }
    if (size > available) return null;
    if (id === 'fmt ') {
      if (size < 16) return null;
      fmt = { sampleRate: wav.readUInt32LE(body + 4), blockAlign: wav.readUInt16LE(body + 12), fmtOffset: body, fmtBytes: size };
    } else if (id === 'data') {
      data = { offset: body, bytes: size };
      fmtFirst = fmt !== null;
    }
    pos = body + size + (size & 1);
  }
  if (!fmt || !data || fmt.sampleRate === 0 || fmt.blockAlign === 0) return null;
  const frames = Math.floor(data.bytes / fmt.blockAlign);
  return { ...fmt, dataOffset: data.offset, dataBytes: data.bytes, fmtFirst, durationSeconds: frames / fmt.sampleRate };
}

/**
 * The header and the first `seconds` of samples as a WAV of its own (a copy,
 * with the data size patched), or null when a prefix cannot hold the fmt chunk.
 */
export function wavPrefix(wav: Buffer, header: WavHeader, seconds: number): Buffer | null {
  if (!header.fmtFirst) return null;
  const frames = Math.max(1, Math.ceil(seconds * header.sampleRate));
  const bytes = Math.min(header.dataBytes, frames * header.blockAlign);
  const prefix = Buffer.from(wav.subarray(0, header.dataOffset + bytes));
  prefix.writeUInt32LE(bytes, header.dataOffset - 4);
  return prefix;
}
