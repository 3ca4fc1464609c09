// Decodes Ogg Vorbis with libvorbis, compiled to WebAssembly by the
// @wasm-audio-decoders/ogg-vorbis package (which reads the packets out of the
// Ogg pages itself, with codec-parser), fed one page at a time. Vorbis keeps the recording's rate, so the samples go
// through the native streaming resampler (the one the MP3 and FLAC decoders
// use) to 16 kHz as they decode.
import { OggVorbisDecoder } from '@wasm-audio-decoders/ogg-vorbis';
import { WavError } from '../native/addon-errors';
import { createResampler, type DecodedAudio } from '../native';
import { downmix } from './mono-pcm';
import { oggPages } from './ogg-reader';

const MAX_CHANNELS = 8;

/** The identification header (Vorbis I section 4.2.2): the Ogg stream's first packet. */
export interface VorbisHead {
  channels: number;
  sampleRate: number;
}

export function parseVorbisHead(packet: Uint8Array | null, what: string): VorbisHead {
  const magic = packet && Buffer.from(packet.subarray(0, 7)).toString('latin1');
  if (!packet || magic !== '\x01vorbis' || packet.length < 30) throw new WavError(`${what}: no Vorbis identification header`, 'corrupt_audio');
  const view = new DataView(packet.buffer, packet.byteOffset, packet.length);
  const head = { channels: view.getUint8(11), sampleRate: view.getUint32(12, true) };
  if (head.channels < 1 || head.channels > MAX_CHANNELS) throw new WavError(`${what}: ${head.channels} channels (at most ${MAX_CHANNELS})`, 'unsupported_format');
  if (head.sampleRate < 8000 || head.sampleRate > 192000) throw new WavError(`${what}: sample rate ${head.sampleRate} Hz is outside 8000-192000`, 'unsupported_format');
  return head;
}

/** `lastGranule`: the stream's last stated sample position (-1 if none), checked against the limit before decoding. */
export async function decodeOggVorbis(bytes: Uint8Array, head: VorbisHead, lastGranule: number, maxSeconds: number): Promise<DecodedAudio> {
  const what = 'ogg/vorbis';
  if (lastGranule > maxSeconds * head.sampleRate) throw new WavError(`${what}: ${Math.ceil(lastGranule / head.sampleRate)} s`, 'audio_too_long');
  const decoder = new OggVorbisDecoder();
  await decoder.ready;
  const resampler = createResampler(head.sampleRate);
  const limit = maxSeconds * head.sampleRate;
  let samples = 0;
  let pcm: Float32Array | null = null;
  try {
    // One page at a time, the limit checked after each: a page holds at most 255 packets, so what one
    // step decodes is bounded (255 x half the longer block size per channel), however small the packets
    // (a 1-byte packet is silence, up to 4096 samples).
    const steps = (function* () {
      for (const page of oggPages(bytes)) yield () => decoder.decode(bytes.subarray(page.start, page.end));
      yield () => decoder.flush(); // what the decoder still holds
    })();
    for (const step of steps) {
      let decoded;
      try {
        decoded = await step();
      } catch (err) {
        // The decoder throws on some damaged packets: codec-parser 2.5.0 calls an error logger its
        // VorbisParser never imports (a ReferenceError), where it means to report a bad header.
        throw new WavError(`${what}: the stream could not be decoded (${(err as Error).message})`, 'corrupt_audio');
      }
      // A stream that changes its rate or channels part-way (a chained file) is not followed.
      if (decoded.samplesDecoded > 0 && decoded.sampleRate !== head.sampleRate) break;
      if (samples + decoded.samplesDecoded > limit) throw new WavError(`${what}: longer than ${Math.ceil(maxSeconds)} s`, 'audio_too_long');
      if (decoded.samplesDecoded > 0) resampler.push(downmix(decoded.channelData, decoded.samplesDecoded));
      samples += decoded.samplesDecoded;
    }
    pcm = resampler.finish();
  } finally {
    decoder.free();
    if (!pcm) resampler.free();
  }
  if (samples === 0 || pcm.length === 0) throw new WavError(`${what}: no audio could be decoded`, 'corrupt_audio');
  return {
    pcm,
    container: 'ogg',
    codec: 'vorbis',
    sampleRate: head.sampleRate,
    channels: head.channels,
    bitsPerSample: 0,
    sampleFormat: '',
    extensible: false,
    durationSeconds: samples / head.sampleRate,
  };
}
