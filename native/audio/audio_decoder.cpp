#include "audio_decoder.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "resampler.h"
// miniaudio's declarations only: its implementation is compiled once in codecs.cpp.
#include "miniaudio_config.h"
#include "miniaudio.h"

namespace stt {
namespace {

// dr_mp3 reads past the first frame when it parses a Xing/LAME tag, without
// checking the end of the buffer: it is given a copy with this much zeroed
// room after the file (the size it is told stays the file's).
constexpr size_t kReadPadding = 4096;

bool starts_with(const uint8_t* data, size_t size, const char* magic, size_t at = 0) {
  const size_t n = std::strlen(magic);
  return size >= at + n && std::memcmp(data + at, magic, n) == 0;
}

// An MPEG-1/2 audio frame header: 11 sync bits, layer III (what dr_mp3 decodes
// here), a bitrate and a rate that are not reserved.
bool mpeg_audio_frame(const uint8_t* p, size_t size) {
  if (size < 4 || p[0] != 0xFF || (p[1] & 0xE0) != 0xE0) return false;
  const int version = (p[1] >> 3) & 3, layer = (p[1] >> 1) & 3, bitrate = p[2] >> 4, rate = (p[2] >> 2) & 3;
  return version != 1 && layer != 0 && bitrate != 0 && bitrate != 15 && rate != 3;
}

// An ADTS (raw AAC) header: the same sync, layer bits 00.
bool adts_frame(const uint8_t* p, size_t size) { return size >= 7 && p[0] == 0xFF && (p[1] & 0xF6) == 0xF0; }

// The size of an ID3v2 tag at the start (header, syncsafe size, footer), or 0.
size_t id3_size(const uint8_t* p, size_t size) {
  if (size < 10 || !starts_with(p, size, "ID3") || ((p[6] | p[7] | p[8] | p[9]) & 0x80)) return 0;
  const size_t body = (static_cast<size_t>(p[6]) << 21) | (static_cast<size_t>(p[7]) << 14) | (static_cast<size_t>(p[8]) << 7) | p[9];
  return 10 + body + ((p[5] & 0x10) ? 10 : 0);
}

std::string describe(const Sniffed& s) { return s.codec.empty() ? s.container : s.container + "/" + s.codec; }

std::string seconds_text(double seconds) { return std::to_string(static_cast<long long>(std::ceil(seconds))) + " s"; }

DecodedAudio decode_with_miniaudio(const uint8_t* data, size_t size, const Sniffed& found, ma_encoding_format encoding,
                                   double max_seconds) {
  std::vector<uint8_t> padded(size + kReadPadding, 0);
  if (size) std::memcpy(padded.data(), data, size);
  ma_decoder_config config = ma_decoder_config_init(ma_format_f32, 0, 0);  // the stream's own channels and rate
  config.encodingFormat = encoding;
  ma_decoder decoder;
  if (ma_decoder_init_memory(padded.data(), size, &config, &decoder) != MA_SUCCESS) {
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
  // FLAC states its length in STREAMINFO: refuse before decoding. (0 means
  // unknown; MP3 has none dr_mp3 reads without decoding.) Decoding stops at
  // the limit in every case.
  if (encoding == ma_encoding_format_flac) {
    ma_uint64 stated = 0;
    if (ma_decoder_get_length_in_pcm_frames(&decoder, &stated) == MA_SUCCESS && static_cast<double>(stated) > max_frames) {
      throw WavError("audio_too_long", describe(found) + ": " + seconds_text(static_cast<double>(stated) / rate));
    }
  }
  StreamingResampler resampler(rate, kOutputSampleRate);
  constexpr ma_uint64 kChunk = 4096;
  std::vector<float> chunk(kChunk * channels);
  std::vector<float> mono(kChunk);
  for (;;) {
    ma_uint64 read = 0;
    const ma_result r = ma_decoder_read_pcm_frames(&decoder, chunk.data(), kChunk, &read);
    for (ma_uint64 i = 0; i < read; ++i) {
      float sum = 0;
      for (ma_uint32 c = 0; c < channels; ++c) sum += chunk[i * channels + c];
      const float v = sum / static_cast<float>(channels);
      // A decoder fed garbage must not hand NaN, infinity or absurd values to the resampler.
      mono[i] = std::isfinite(v) ? std::fmax(-8.0f, std::fmin(8.0f, v)) : 0.0f;
    }
    resampler.push(mono.data(), static_cast<size_t>(read));
    if (static_cast<double>(resampler.input_samples()) > max_frames) {
      throw WavError("audio_too_long", describe(found) + ": longer than " + seconds_text(max_seconds));
    }
    if (r == MA_AT_END || read == 0) break;
    // A damaged frame past the start: keep what decoded (a truncated upload is still speech).
    if (r != MA_SUCCESS) break;
  }
  DecodedAudio out;
  out.container = found.container;
  out.codec = found.codec;
  out.sample_rate = rate;
  out.channels = static_cast<uint16_t>(channels);
  out.frames = resampler.input_samples();
  if (out.frames == 0) throw WavError("corrupt_audio", describe(found) + ": no audio could be decoded");
  out.pcm = resampler.finish();
  if (out.pcm.empty()) throw WavError("no_samples", describe(found) + ": audio is too short to resample");
  return out;
}

Sniffed sniff_untagged(const uint8_t* data, size_t size);

}  // namespace

Sniffed sniff_audio(const uint8_t* data, size_t size) {
  // Tags in front say nothing of the audio after them (FLAC and AAC files carry
  // them too): skip a few, then sniff what follows.
  bool tagged = false;
  for (int tags = 0; tags < 4; ++tags) {
    const size_t tag = id3_size(data, size);
    if (tag == 0 || tag >= size) break;
    data += tag;
    size -= tag;
    tagged = true;
  }
  Sniffed found = sniff_untagged(data, size);
  // An ID3-tagged file whose audio starts past junk: dr_mp3 looks for the first frame.
  if (found.container.empty() && tagged) return {"mp3", "mp3"};
  return found;
}

namespace {

Sniffed sniff_untagged(const uint8_t* data, size_t size) {
  if (starts_with(data, size, "RIFF") && starts_with(data, size, "WAVE", 8)) return {"wav", ""};
  if (starts_with(data, size, "fLaC")) return {"flac", "flac"};
  if (starts_with(data, size, "OggS")) {
    // The first page holds the first packet, which names the codec.
    const size_t within = size < 80 ? size : 80;
    auto has = [&](const char* needle, size_t n) {
      for (size_t i = 0; i + n <= within; ++i) {
        if (std::memcmp(data + i, needle, n) == 0) return true;
      }
      return false;
    };
    if (has("\x01vorbis", 7)) return {"ogg", "vorbis"};
    if (has("OpusHead", 8)) return {"ogg", "opus"};
    if (has("\x7f" "FLAC", 5)) return {"ogg", "flac"};
    return {"ogg", ""};
  }
  if (size >= 4 && data[0] == 0x1A && data[1] == 0x45 && data[2] == 0xDF && data[3] == 0xA3) return {"webm", ""};
  if (starts_with(data, size, "ftyp", 4)) return {"mp4", ""};
  if (starts_with(data, size, "FORM") && (starts_with(data, size, "AIFF", 8) || starts_with(data, size, "AIFC", 8))) return {"aiff", ""};
  if (starts_with(data, size, "caff")) return {"caf", ""};
  if (adts_frame(data, size)) return {"aac", "aac"};
  if (mpeg_audio_frame(data, size)) return {"mp3", "mp3"};
  return {"", ""};
}

}  // namespace

DecodedAudio decode_wav_audio(const uint8_t* data, size_t size, double max_seconds) {
  // Refused from the header before any sample is read; the samples go through the
  // resampler in pieces, so only the 16-kHz output is held (the same samples
  // Resampler::resample gives over the whole, audio_fuzz checks).
  std::optional<StreamingResampler> resampler;
  const WavInfo info = read_wav(
      data, size,
      [&](const WavInfo& i) {
        if (static_cast<double>(i.frames) > max_seconds * i.sample_rate) {
          throw WavError("audio_too_long", "wav: " + seconds_text(static_cast<double>(i.frames) / i.sample_rate));
        }
        resampler.emplace(i.sample_rate, kOutputSampleRate);
        resampler->reserve(i.frames);
      },
      [&](const float* mono, size_t n) { resampler->push(mono, n); });
  DecodedAudio out;
  out.container = "wav";
  out.codec = info.sample_format;
  out.sample_rate = info.sample_rate;
  out.channels = info.channels;
  out.frames = info.frames;
  out.wav = info;
  out.pcm = resampler->finish();
  if (out.pcm.empty()) throw WavError("no_samples", "audio is too short to resample");
  return out;
}

DecodedAudio decode_audio(const uint8_t* data, size_t size, double max_seconds) {
  const Sniffed found = sniff_audio(data, size);
  // WAV, and anything unrecognised, which the WAV decoder names precisely (not_riff_wave, ...).
  if (found.container.empty() || found.container == "wav") return decode_wav_audio(data, size, max_seconds);
  if (found.container == "mp3") return decode_with_miniaudio(data, size, found, ma_encoding_format_mp3, max_seconds);
  if (found.container == "flac") return decode_with_miniaudio(data, size, found, ma_encoding_format_flac, max_seconds);
  throw WavError("unsupported_codec", describe(found) + " is not decoded by this server (it reads WAV, MP3, FLAC, Ogg (Opus, Vorbis) and WebM (Opus))");
}

}  // namespace stt
