// Decodes Opus packets (from an Ogg or WebM file) to 16-kHz mono with
// libopus, compiled to WebAssembly by the opus-decoder package: libopus
// decodes straight to 16 kHz, so no resampling follows. A WebAssembly decoder
// cannot touch the process's memory, so a hostile packet can at worst fail.
import { OpusDecoder } from 'opus-decoder';
import { WavError } from '../native/addon-errors';
import type { DecodedAudio } from '../native';
import { MonoPcm, OUTPUT_RATE } from './mono-pcm';

const OPUS_RATE = 48000;
const MAX_CHANNELS = 8;
/** Packets libopus may refuse (a damaged stretch) before the stream counts as corrupt. */
const MAX_BAD_PACKETS = 8;

/** The identification header (RFC 7845 section 5.1): the Ogg stream's first packet, WebM's CodecPrivate. */
export interface OpusHead {
  channels: number;
  /** Samples at 48 kHz the decoder drops from the start. */
  preSkip: number;
  streamCount: number;
  coupledStreamCount: number;
  mapping: number[];
}

export function parseOpusHead(packet: Uint8Array | null, what: string): OpusHead {
  const magic = packet && Buffer.from(packet.subarray(0, 8)).toString('latin1');
  if (!packet || magic !== 'OpusHead' || packet.length < 19) throw new WavError(`${what}: no Opus identification header`, 'corrupt_audio');
  const view = new DataView(packet.buffer, packet.byteOffset, packet.length);
  const version = view.getUint8(8);
  const channels = view.getUint8(9);
  const family = view.getUint8(18);
  // A major version other than 0 is a format this decoder does not know.
  if (version >= 16) throw new WavError(`${what}: Opus header version ${version}`, 'corrupt_audio');
  if (channels < 1 || channels > MAX_CHANNELS) throw new WavError(`${what}: ${channels} channels (at most ${MAX_CHANNELS})`, 'unsupported_format');
  const head: OpusHead = { channels, preSkip: view.getUint16(10, true), streamCount: 1, coupledStreamCount: channels - 1, mapping: channels === 2 ? [0, 1] : [0] };
  if (family === 0) {
    if (channels > 2) throw new WavError(`${what}: ${channels} channels in mapping family 0`, 'corrupt_audio');
    return head;
  }
  if (packet.length < 21 + channels) throw new WavError(`${what}: Opus channel mapping cut short`, 'corrupt_audio');
  head.streamCount = view.getUint8(19);
  head.coupledStreamCount = view.getUint8(20);
  head.mapping = Array.from(packet.subarray(21, 21 + channels));
  const streams = head.streamCount + head.coupledStreamCount;
  if (head.streamCount < 1 || head.coupledStreamCount > head.streamCount || streams > 255 || head.mapping.some((m) => m !== 255 && m >= streams)) {
    throw new WavError(`${what}: Opus channel mapping out of range`, 'corrupt_audio');
  }
  return head;
}

export interface OpusSource {
  container: string;
  head: OpusHead;
  packets: Iterable<Uint8Array>;
  /** Samples at 48 kHz the container says the stream holds (after the pre-skip), or null. */
  statedSamples: number | null;
}

/** opus-decoder's input buffer: 120 ms at 256 kbit/s per channel; a longer packet does not fit (nor is valid Opus). */
const maxPacketBytes = (channels: number) => 32000 * 0.12 * channels;

/**
 * One packet through libopus, or null when it is no valid packet: empty (a
 * lost packet to libopus, which would conceal 360 ms of it) or too long for
 * the decoder's input. opus-decoder writes each packet libopus refuses to
 * console.error; the error comes back in `errors` too, and is counted and
 * reported by the caller, so the line is dropped here (the call is
 * synchronous: nothing else can log meanwhile).
 */
function decodePacket(decoder: OpusDecoder<16000>, packet: Uint8Array, channels: number): ReturnType<OpusDecoder<16000>['decodeFrame']> | null {
  if (packet.length === 0 || packet.length > maxPacketBytes(channels)) return null;
  const log = console.error;
  console.error = () => {};
  try {
    return decoder.decodeFrame(packet);
  } finally {
    console.error = log;
  }
}

export async function decodeOpus({ container, head, packets, statedSamples }: OpusSource, maxSeconds: number): Promise<DecodedAudio> {
  const what = `${container}/opus`;
  if (statedSamples !== null && statedSamples > maxSeconds * OPUS_RATE) {
    throw new WavError(`${what}: ${Math.ceil(statedSamples / OPUS_RATE)} s`, 'audio_too_long');
  }
  const decoder = new OpusDecoder<16000>({
    sampleRate: OUTPUT_RATE,
    channels: head.channels,
    streamCount: head.streamCount,
    coupledStreamCount: head.coupledStreamCount,
    channelMappingTable: head.mapping,
    // opus-decoder drops this many samples at the rate it outputs, not at 48 kHz as the header counts them.
    preSkip: Math.round((head.preSkip * OUTPUT_RATE) / OPUS_RATE),
  });
  await decoder.ready;
  const pcm = new MonoPcm(what, maxSeconds);
  let bad = 0;
  try {
    for (const packet of packets) {
      const decoded = decodePacket(decoder, packet, head.channels);
      if (!decoded || decoded.errors.length > 0) {
        if (++bad > MAX_BAD_PACKETS) throw new WavError(`${what}: ${bad} packets could not be decoded`, 'corrupt_audio');
        continue;
      }
      pcm.push(decoded.channelData, decoded.samplesDecoded);
    }
  } finally {
    decoder.free();
  }
  if (pcm.samples === 0) throw new WavError(`${what}: no audio could be decoded`, 'corrupt_audio');
  // The container's stated length trims the last packet's padding.
  const keep = statedSamples !== null && statedSamples > 0 ? Math.round((statedSamples * OUTPUT_RATE) / OPUS_RATE) : Infinity;
  const out = pcm.join(keep);
  return {
    pcm: out,
    container,
    codec: 'opus',
    sampleRate: OPUS_RATE,
    channels: head.channels,
    bitsPerSample: 0,
    sampleFormat: '',
    extensible: false,
    durationSeconds: out.length / OUTPUT_RATE,
  };
}
