// Parses a WAV file held in memory and returns its samples as mono float32 at
// the source rate (decode_wav), or hands them on in pieces (read_wav), so a
// caller that resamples them never holds them whole. Pure C++, no N-API: the
// fuzz driver links it directly.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace stt {

// `code` is stable: the TypeScript layer and tests match on it.
class WavError : public std::runtime_error {
 public:
  WavError(const char* code, const std::string& message) : std::runtime_error(message), code_(code) {}
  const char* code() const { return code_; }

 private:
  const char* code_;
};

struct WavInfo {
  uint32_t sample_rate = 0;
  uint16_t channels = 0;
  uint16_t bits_per_sample = 0;
  std::string sample_format;  // pcm_u8, pcm_s16, pcm_s24, pcm_s32, float32, float64, alaw, mulaw
  bool extensible = false;
  size_t frames = 0;
};

struct DecodedWav {
  WavInfo info;
  std::vector<float> mono;  // downmixed, at info.sample_rate
};

constexpr uint32_t kMinSampleRate = 8000;
constexpr uint32_t kMaxSampleRate = 192000;
constexpr uint16_t kMaxChannels = 8;
// What the engines consume: 16 kHz mono. whisper.cpp and parakeet.cpp count
// samples in an int, so more than INT32_MAX samples (about 37 hours) are
// refused from the header, before anything is allocated.
constexpr uint32_t kOutputSampleRate = 16000;
constexpr size_t kMaxOutputSamples = 2147483647;

DecodedWav decode_wav(const uint8_t* data, size_t size);

// The same parse and refusals as decode_wav; `header` is called once the
// header is read and checked (it may refuse, before any sample is read), then
// `samples` with the downmixed samples in order, a few thousand at a time.
WavInfo read_wav(const uint8_t* data, size_t size, const std::function<void(const WavInfo&)>& header,
                 const std::function<void(const float*, size_t)>& samples);

}  // namespace stt
