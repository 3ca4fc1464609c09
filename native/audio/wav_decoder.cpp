#include "wav_decoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace stt {
namespace {

constexpr uint16_t kFormatPcm = 0x0001;
constexpr uint16_t kFormatFloat = 0x0003;
constexpr uint16_t kFormatAlaw = 0x0006;
constexpr uint16_t kFormatMulaw = 0x0007;
constexpr uint16_t kFormatExtensible = 0xFFFE;
// Tail shared by every KSDATAFORMAT_SUBTYPE_* GUID; the first two bytes carry the format tag.
constexpr uint8_t kSubformatTail[14] = {0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71};

uint16_t u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) | (static_cast<uint32_t>(p[2]) << 16) |
         (static_cast<uint32_t>(p[3]) << 24);
}

float alaw_to_float(uint8_t a) {
  a ^= 0x55;
  int t = (a & 0x0F) << 4;
  const int seg = (a & 0x70) >> 4;
  if (seg == 0) t += 8;
  else if (seg == 1) t += 0x108;
  else t = (t + 0x108) << (seg - 1);
  return static_cast<float>((a & 0x80) ? t : -t) / 32768.0f;
}

float mulaw_to_float(uint8_t u) {
  u = static_cast<uint8_t>(~u);
  int t = ((u & 0x0F) << 3) + 0x84;
  t <<= (u & 0x70) >> 4;
  return static_cast<float>((u & 0x80) ? (0x84 - t) : (t - 0x84)) / 32768.0f;
}

struct Format {
  uint16_t tag = 0;
  uint16_t channels = 0;
  uint32_t rate = 0;
  uint16_t block_align = 0;
  uint16_t bits = 0;
  bool extensible = false;
};

Format parse_fmt(const uint8_t* p, uint32_t size) {
  if (size < 16) throw WavError("truncated_header", "fmt chunk is shorter than 16 bytes");
  Format f;
  f.tag = u16(p);
  f.channels = u16(p + 2);
  f.rate = u32(p + 4);
  f.block_align = u16(p + 12);
  f.bits = u16(p + 14);
  if (f.tag == kFormatExtensible) {
    if (size < 40) throw WavError("truncated_header", "WAVE_FORMAT_EXTENSIBLE fmt chunk is shorter than 40 bytes");
    const uint8_t* guid = p + 24;
    if (std::memcmp(guid + 2, kSubformatTail, sizeof kSubformatTail) != 0) {
      throw WavError("unsupported_codec", "WAVE_FORMAT_EXTENSIBLE with an unknown sub-format");
    }
    f.tag = u16(guid);
    f.extensible = true;
  }
  return f;
}

const char* sample_format_name(const Format& f) {
  switch (f.tag) {
    case kFormatPcm:
      switch (f.bits) {
        case 8: return "pcm_u8";
        case 16: return "pcm_s16";
        case 24: return "pcm_s24";
        case 32: return "pcm_s32";
        default: return nullptr;
      }
    case kFormatFloat: return f.bits == 32 ? "float32" : f.bits == 64 ? "float64" : nullptr;
    case kFormatAlaw: return f.bits == 8 ? "alaw" : nullptr;
    case kFormatMulaw: return f.bits == 8 ? "mulaw" : nullptr;
    default: return nullptr;
  }
}

void validate(const Format& f) {
  if (f.tag != kFormatPcm && f.tag != kFormatFloat && f.tag != kFormatAlaw && f.tag != kFormatMulaw) {
    throw WavError("unsupported_codec", "unsupported WAV codec 0x" + [&] {
      char buf[8];
      std::snprintf(buf, sizeof buf, "%04x", f.tag);
      return std::string(buf);
    }() + " (accepted: PCM, IEEE float, A-law, mu-law)");
  }
  if (f.channels == 0) throw WavError("invalid_format", "WAV declares zero channels");
  if (f.rate == 0) throw WavError("invalid_format", "WAV declares a sample rate of zero");
  if (f.channels > kMaxChannels) throw WavError("invalid_format", "WAV has more than 8 channels");
  if (f.rate < kMinSampleRate || f.rate > kMaxSampleRate) {
    throw WavError("unsupported_sample_rate", "sample rate " + std::to_string(f.rate) + " Hz is outside 8000..192000 Hz");
  }
  if (!sample_format_name(f)) {
    throw WavError("unsupported_codec", std::to_string(f.bits) + "-bit samples are not supported for this codec");
  }
  if (f.block_align != f.channels * (f.bits / 8)) {
    throw WavError("invalid_format", "block align does not match channels and sample size");
  }
}

float read_sample(const Format& f, const uint8_t* p) {
  switch (f.tag) {
    case kFormatPcm:
      switch (f.bits) {
        case 8: return (static_cast<float>(p[0]) - 128.0f) / 128.0f;
        case 16: return static_cast<float>(static_cast<int16_t>(u16(p))) / 32768.0f;
        case 24: {
          int32_t v = static_cast<int32_t>(static_cast<uint32_t>(p[0]) << 8 | static_cast<uint32_t>(p[1]) << 16 |
                                           static_cast<uint32_t>(p[2]) << 24) >> 8;
          return static_cast<float>(v) / 8388608.0f;
        }
        default: return static_cast<float>(static_cast<double>(static_cast<int32_t>(u32(p))) / 2147483648.0);
      }
    case kFormatFloat: {
      double v;
      if (f.bits == 32) {
        float x;
        std::memcpy(&x, p, 4);
        v = x;
      } else {
        std::memcpy(&v, p, 8);
      }
      // Non-finite samples would poison the whole mel spectrogram.
      return std::isfinite(v) ? static_cast<float>(v) : 0.0f;
    }
    case kFormatAlaw: return alaw_to_float(p[0]);
    default: return mulaw_to_float(p[0]);
  }
}

}  // namespace

WavInfo read_wav(const uint8_t* data, size_t size, const std::function<void(const WavInfo&)>& header,
                 const std::function<void(const float*, size_t)>& take) {
  if (size >= 4 && std::memcmp(data, "RIFF", 4) != 0) throw WavError("not_riff_wave", "not a RIFF file");
  if (size < 12) throw WavError("truncated_header", "file is shorter than a RIFF/WAVE header");
  if (std::memcmp(data + 8, "WAVE", 4) != 0) throw WavError("not_riff_wave", "RIFF file is not WAVE");

  bool have_fmt = false;
  Format fmt;
  const uint8_t* samples = nullptr;
  size_t samples_len = 0;

  size_t pos = 12;
  while (size - pos >= 8) {
    const uint8_t* chunk = data + pos;
    const uint32_t chunk_size = u32(chunk + 4);
    const size_t body = pos + 8;
    const size_t available = size - body;
    if (std::memcmp(chunk, "fmt ", 4) == 0) {
      if (chunk_size > available) throw WavError("truncated_header", "fmt chunk runs past the end of the file");
      fmt = parse_fmt(data + body, chunk_size);
      have_fmt = true;
    } else if (std::memcmp(chunk, "data", 4) == 0) {
      // 0 and 0xFFFFFFFF mark a streamed WAV whose writer never patched the size: read to the end.
      if (chunk_size == 0 || chunk_size == 0xFFFFFFFFu) {
        samples = data + body;
        samples_len = available;
        break;
      }
      if (chunk_size > available) {
        throw WavError("size_out_of_bounds", "data chunk declares " + std::to_string(chunk_size) + " bytes but only " +
                                                 std::to_string(available) + " follow");
      }
      samples = data + body;
      samples_len = chunk_size;
      if (have_fmt) break;
    } else if (chunk_size > available) {
      if (!have_fmt || !samples) {
        throw WavError("size_out_of_bounds", "a chunk declares a size past the end of the file");
      }
      break;
    }
    // Chunks are word-aligned: an odd-sized chunk is followed by one pad byte.
    const uint64_t next = static_cast<uint64_t>(body) + chunk_size + (chunk_size & 1u);
    if (next >= size) break;
    pos = static_cast<size_t>(next);
  }

  if (!have_fmt) throw WavError("truncated_header", "no fmt chunk before the end of the file");
  validate(fmt);
  if (!samples) throw WavError("no_samples", "no data chunk");

  WavInfo info;
  info.sample_rate = fmt.rate;
  info.channels = fmt.channels;
  info.bits_per_sample = fmt.bits;
  info.sample_format = sample_format_name(fmt);
  info.extensible = fmt.extensible;
  info.frames = samples_len / fmt.block_align;
  if (info.frames == 0) throw WavError("no_samples", "data chunk holds no complete sample frame");
  const double output_samples = static_cast<double>(info.frames) * kOutputSampleRate / fmt.rate;
  if (output_samples > static_cast<double>(kMaxOutputSamples)) {
    throw WavError("too_long", "audio is longer than the engines accept (" + std::to_string(kMaxOutputSamples) +
                                   " samples at 16 kHz, about 37 hours)");
  }

  header(info);

  const size_t bytes_per_sample = fmt.bits / 8;
  const float scale = 1.0f / static_cast<float>(fmt.channels);
  constexpr size_t kPiece = 4096;
  float mono[kPiece];
  for (size_t at = 0; at < info.frames; at += kPiece) {
    const size_t n = std::min(kPiece, info.frames - at);
    for (size_t i = 0; i < n; ++i) {
      const uint8_t* frame = samples + (at + i) * fmt.block_align;
      float sum = 0.0f;
      for (uint16_t c = 0; c < fmt.channels; ++c) sum += read_sample(fmt, frame + c * bytes_per_sample);
      mono[i] = sum * scale;
    }
    take(mono, n);
  }
  return info;
}

DecodedWav decode_wav(const uint8_t* data, size_t size) {
  DecodedWav out;
  out.info = read_wav(
      data, size, [&](const WavInfo& info) { out.mono.reserve(info.frames); },
      [&](const float* mono, size_t n) { out.mono.insert(out.mono.end(), mono, mono + n); });
  return out;
}

}  // namespace stt
