// Ogg (Opus, Vorbis) and WebM/Matroska (Opus) files to 16-kHz mono float
// samples: the containers read here (ogg-reader.ts, webm-reader.ts), the
// codecs decoded by libopus and libvorbis compiled to WebAssembly
// (opus-decode.ts, vorbis-decode.ts). Runs on the decoder thread
// (decode-worker.ts), so the event loop stays free while it works.
import type { DecodedAudio } from '../native';
import { WavError } from '../native/addon-errors';
import { isOgg, readOggStream } from './ogg-reader';
import { isEbml, readWebm } from './webm-reader';
import { decodeOpus, parseOpusHead } from './opus-decode';
import { decodeOggVorbis, parseVorbisHead } from './vorbis-decode';

/** What every decoder says it reads when it names what it does not (native/audio/audio_decoder.cpp says the same). */
const READS = 'it reads WAV, MP3, FLAC, Ogg (Opus, Vorbis) and WebM (Opus)';

/** Matroska's codec ids, as this server names codecs in errors. */
const MATROSKA_CODECS: Record<string, string> = { A_OPUS: 'opus', A_VORBIS: 'vorbis', A_AAC: 'aac', A_FLAC: 'flac', 'A_MPEG/L3': 'mp3', A_AC3: 'ac3', A_EAC3: 'eac3' };
const matroskaCodec = (id: string) => MATROSKA_CODECS[id] ?? (id.startsWith('A_PCM') ? 'pcm' : id.replace(/^A_/, '').toLowerCase());

function unsupported(what: string): never {
  throw new WavError(`${what} is not decoded by this server (${READS})`, 'unsupported_codec');
}

function oggCodec(first: Uint8Array | undefined): string {
  const text = first ? Buffer.from(first.subarray(0, 8)).toString('latin1') : '';
  if (text.startsWith('OpusHead')) return 'opus';
  if (text.startsWith('\x01vorbis')) return 'vorbis';
  if (text.startsWith('\x7fFLAC')) return 'flac';
  if (text.startsWith('Speex')) return 'speex';
  return '';
}

async function decodeOgg(bytes: Uint8Array, maxSeconds: number): Promise<DecodedAudio> {
  const stream = readOggStream(bytes);
  const first = stream.packets[Symbol.iterator]().next().value;
  const codec = oggCodec(first);
  if (codec === 'opus') {
    const head = parseOpusHead(first ?? null, 'ogg/opus');
    // The header packets (OpusHead, OpusTags) are not audio.
    const packets = (function* () {
      let index = 0;
      for (const packet of stream.packets) if (index++ >= 2) yield packet;
    })();
    const statedSamples = stream.lastGranule > 0 ? Math.max(0, stream.lastGranule - head.preSkip) : null;
    return decodeOpus({ container: 'ogg', head, packets, statedSamples }, maxSeconds);
  }
  if (codec === 'vorbis') return decodeOggVorbis(bytes, parseVorbisHead(first ?? null, 'ogg/vorbis'), stream.lastGranule, maxSeconds);
  if (!first) throw new WavError('ogg: no packets could be read', 'corrupt_audio');
  return unsupported(codec ? `ogg/${codec}` : 'ogg with an unknown codec');
}

async function decodeMatroska(bytes: Uint8Array, maxSeconds: number): Promise<DecodedAudio> {
  const webm = readWebm(bytes);
  const container = webm.docType === 'matroska' ? 'matroska' : 'webm';
  if (!webm.track) throw new WavError(`${container}: no audio track`, 'corrupt_audio');
  const codec = matroskaCodec(webm.track.codecId);
  if (codec !== 'opus') return unsupported(`${container}/${codec || 'unknown codec'}`);
  const head = parseOpusHead(webm.track.codecPrivate, `${container}/opus`);
  const statedSamples = webm.durationSeconds !== null ? Math.round(webm.durationSeconds * 48000) : null;
  // A stated duration is only checked against the limit: it is rounded to the timecode scale, too coarse to trim by.
  if (statedSamples !== null && statedSamples > maxSeconds * 48000) throw new WavError(`${container}/opus: ${Math.ceil(webm.durationSeconds!)} s`, 'audio_too_long');
  return decodeOpus({ container, head, packets: webm.frames, statedSamples: null }, maxSeconds);
}

/** Decodes an Ogg or WebM/Matroska file; rejects with a WavError whose code is stable. */
export function decodeCompressed(bytes: Uint8Array, maxSeconds: number): Promise<DecodedAudio> {
  return isOgg(bytes) ? decodeOgg(bytes, maxSeconds) : decodeMatroska(bytes, maxSeconds);
}
