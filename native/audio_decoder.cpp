#include "audio_decoder.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

// miniaudio's declarations only: its implementation (and stb_vorbis's) is
// compiled once in codecs.cpp.
#include "miniaudio_config.h"
#include "miniaudio.h"

namespace stt {
namespace {

bool starts_with(const uint8_t* data, size_t size, const char* magic, size_t at = 0) {
  const size_t n = std::strlen(magic);
  return size >= at + n && std::memcmp(data + at, magic, n) == 0;
}

bool contains(const uint8_t* data, size_t size, const char* needle, size_t within) {
  const size_t n = std::strlen(needle);
  const size_t end = size < within ? size : within;
  for (size_t i = 0; i + n <= end; ++i) {
    if (std::memcmp(data + i, needle, n) == 0) return true;
  }
  return false;
}

// An MPEG audio frame header: 11 sync bits, a layer, a bitrate and a rate that are not reserved.
bool mpeg_frame(const uint8_t* p, size_t size) {
  if (size < 4 || p[0] != 0xFF || (p[1] & 0xE0) != 0xE0) return false;
  const int version = (p[1] >> 3) & 3, layer = (p[1] >> 1) & 3, bitrate = p[2] >> 4, rate = (p[2] >> 2) & 3;
  return version != 1 && layer != 0 && bitrate != 15 && rate != 3;
}

std::string describe(const Sniffed& s) { return s.codec.empty() ? s.container : s.container + "/" + s.codec; }

// Downmixes interleaved frames into `out`, averaging the channels.
void append_mono(const float* frames, ma_uint64 count, ma_uint32 channels, std::vector<float>& out) {
  for (ma_uint64 i = 0; i < count; ++i) {
    float sum = 0;
    for (ma_uint32 c = 0; c < channels; ++c) sum += frames[i * channels + c];
    out.push_back(sum / static_cast<float>(channels));
  }
}

DecodedAudio decode_with_miniaudio(const uint8_t* data, size_t size, const Sniffed& found, ma_encoding_format encoding,
                                   double max_seconds) {
  ma_decoder_config config = ma_decoder_config_init(ma_format_f32, 0, 0);  // the stream's own channels and rate
  config.encodingFormat = encoding;
  ma_decoder decoder;
  if (ma_decoder_init_memory(data, size, &config, &decoder) != MA_SUCCESS) {
    throw WavError("corrupt_audio", describe(found) + ": the stream could not be opened");
  }
  struct Closer {
    ma_decoder* d;
    ~Closer() { ma_decoder_uninit(d); }
  } closer{&decoder};
  ma_format format;
  ma_uint32 channels = 0, rate = 0;
  if (ma_decoder_get_data_format(&decoder, &format, &channels, &rate, nullptr, 0) != MA_SUCCESS || channels == 0 || rate == 0) {
    throw WavError("corrupt_audio", describe(found) + ": no usable stream format");
  }
  if (rate < kMinSampleRate || rate > kMaxSampleRate) {
    throw WavError("unsupported_format", describe(found) + ": sample rate " + std::to_string(rate) + " Hz is outside 8000-192000");
  }
  if (channels > kMaxChannels) {
    throw WavError("unsupported_format", describe(found) + ": " + std::to_string(channels) + " channels (at most 8)");
  }
  const double max_frames = max_seconds * rate;
  // Where the stream states its length cheaply (FLAC's STREAMINFO, Vorbis's last
  // granule), refuse before decoding; MP3 has none that dr_mp3 reads without
  // decoding, so decoding stops at the limit instead.
  if (encoding != ma_encoding_format_mp3) {
    ma_uint64 stated = 0;
    if (ma_decoder_get_length_in_pcm_frames(&decoder, &stated) == MA_SUCCESS && stated > 0 && static_cast<double>(stated) > max_frames) {
      throw WavError("audio_too_long", describe(found) + ": " + std::to_string(static_cast<long long>(std::ceil(stated / static_cast<double>(rate)))) + " s");
    }
  }
  DecodedAudio out;
  out.container = found.container;
  out.codec = found.codec;
  out.sample_rate = rate;
  out.channels = static_cast<uint16_t>(channels);
  constexpr ma_uint64 kChunk = 4096;
  std::vector<float> chunk(kChunk * channels);
  for (;;) {
    ma_uint64 read = 0;
    const ma_result r = ma_decoder_read_pcm_frames(&decoder, chunk.data(), kChunk, &read);
    append_mono(chunk.data(), read, channels, out.mono);
    if (static_cast<double>(out.mono.size()) > max_frames) {
      throw WavError("audio_too_long", describe(found) + ": longer than " + std::to_string(static_cast<long long>(max_seconds)) + " s");
    }
    if (r == MA_AT_END || read == 0) break;
    // A damaged frame past the start: keep what decoded (a truncated upload is still speech).
    if (r != MA_SUCCESS) break;
  }
  if (out.mono.empty()) throw WavError("corrupt_audio", describe(found) + ": no audio could be decoded");
  if (out.mono.size() > kMaxOutputSamples) throw WavError("audio_too_long", describe(found) + ": too many samples");
  for (float& v : out.mono) {
    if (!std::isfinite(v)) v = 0;  // a decoder fed garbage must not hand NaN to the resampler
  }
  return out;
}

// Ogg Vorbis through stb_vorbis directly, so that everything it allocates
// comes from one fixed arena: a damaged header cannot make it ask the heap
// for gigabytes (found by scripts/fuzz-wav.sh), it gets VORBIS_outofmem
// instead. Real streams need a few hundred kB of setup memory.
constexpr int kVorbisArenaBytes = 8 << 20;

DecodedAudio decode_vorbis(const uint8_t* data, size_t size, const Sniffed& found, double max_seconds) {
  if (size > static_cast<size_t>(INT32_MAX)) throw WavError("audio_too_long", describe(found) + ": the file is too large");
  std::vector<char> arena(kVorbisArenaBytes);
  stb_vorbis_alloc alloc{arena.data(), kVorbisArenaBytes};
  int error = 0;
  stb_vorbis* v = stb_vorbis_open_memory(data, static_cast<int>(size), &error, &alloc);
  if (!v) throw WavError("corrupt_audio", describe(found) + ": the stream could not be opened (stb_vorbis error " + std::to_string(error) + ")");
  struct Closer {
    stb_vorbis* v;
    ~Closer() { stb_vorbis_close(v); }
  } closer{v};
  const stb_vorbis_info info = stb_vorbis_get_info(v);
  const uint32_t rate = info.sample_rate;
  const int channels = info.channels;
  if (rate < kMinSampleRate || rate > kMaxSampleRate) {
    throw WavError("unsupported_format", describe(found) + ": sample rate " + std::to_string(rate) + " Hz is outside 8000-192000");
  }
  if (channels < 1 || channels > kMaxChannels) {
    throw WavError("unsupported_format", describe(found) + ": " + std::to_string(channels) + " channels (1 to 8)");
  }
  const double max_frames = max_seconds * rate;
  // The last page's granule position: the stream's length, before decoding.
  const unsigned int stated = stb_vorbis_stream_length_in_samples(v);
  if (stated > 0 && static_cast<double>(stated) > max_frames) {
    throw WavError("audio_too_long", describe(found) + ": " + std::to_string(static_cast<long long>(std::ceil(stated / static_cast<double>(rate)))) + " s");
  }
  stb_vorbis_seek_start(v);
  DecodedAudio out;
  out.container = found.container;
  out.codec = found.codec;
  out.sample_rate = rate;
  out.channels = static_cast<uint16_t>(channels);
  constexpr int kChunk = 4096;
  std::vector<float> chunk(static_cast<size_t>(kChunk) * channels);
  for (;;) {
    const int read = stb_vorbis_get_samples_float_interleaved(v, channels, chunk.data(), kChunk * channels);
    if (read <= 0) break;
    append_mono(chunk.data(), static_cast<ma_uint64>(read), static_cast<ma_uint32>(channels), out.mono);
    if (static_cast<double>(out.mono.size()) > max_frames) {
      throw WavError("audio_too_long", describe(found) + ": longer than " + std::to_string(static_cast<long long>(max_seconds)) + " s");
    }
  }
  if (out.mono.empty()) throw WavError("corrupt_audio", describe(found) + ": no audio could be decoded");
  for (float& x : out.mono) {
    if (!std::isfinite(x)) x = 0;
  }
  return out;
}

}  // namespace

Sniffed sniff_audio(const uint8_t* data, size_t size) {
  if (starts_with(data, size, "RIFF") && starts_with(data, size, "WAVE", 8)) return {"wav", ""};
  if (starts_with(data, size, "fLaC")) return {"flac", "flac"};
  if (starts_with(data, size, "OggS")) {
    // The first page holds the first packet, which names the codec.
    if (contains(data, size, "\x01vorbis", 64)) return {"ogg", "vorbis"};
    if (contains(data, size, "OpusHead", 64)) return {"ogg", "opus"};
    if (contains(data, size, "\x7f" "FLAC", 64)) return {"ogg", "flac"};
    return {"ogg", ""};
  }
  if (size >= 4 && data[0] == 0x1A && data[1] == 0x45 && data[2] == 0xDF && data[3] == 0xA3) {
    return {contains(data, size, "webm", 64) ? "webm" : "matroska", ""};
  }
  if (starts_with(data, size, "ftyp", 4)) return {"mp4", ""};
  if (starts_with(data, size, "ID3") || mpeg_frame(data, size)) return {"mp3", "mp3"};
  return {"", ""};
}

DecodedAudio decode_audio(const uint8_t* data, size_t size, double max_seconds) {
  const Sniffed found = sniff_audio(data, size);
  if (found.container.empty() || found.container == "wav") {
    // WAV, and anything unrecognised, which the WAV decoder names precisely (not_riff_wave, ...).
    DecodedWav wav = decode_wav(data, size);
    if (static_cast<double>(wav.info.frames) > max_seconds * wav.info.sample_rate) {
      throw WavError("audio_too_long", "wav: " + std::to_string(static_cast<long long>(std::ceil(wav.info.frames / static_cast<double>(wav.info.sample_rate)))) + " s");
    }
    DecodedAudio out;
    out.container = "wav";
    out.codec = wav.info.sample_format;
    out.sample_rate = wav.info.sample_rate;
    out.channels = wav.info.channels;
    out.wav = wav.info;
    out.mono = std::move(wav.mono);
    return out;
  }
  if (found.container == "mp3") return decode_with_miniaudio(data, size, found, ma_encoding_format_mp3, max_seconds);
  if (found.container == "flac") return decode_with_miniaudio(data, size, found, ma_encoding_format_flac, max_seconds);
  if (found.container == "ogg" && found.codec == "vorbis") return decode_vorbis(data, size, found, max_seconds);
  throw WavError("unsupported_codec", describe(found) + " is not decoded by this server (it reads WAV, MP3, FLAC and Ogg Vorbis)");
}

}  // namespace stt
