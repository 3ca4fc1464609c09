// Band-limited resampling by windowed-sinc interpolation (Kaiser window, a
// finely sampled kernel table read with linear interpolation), so any ratio
// between 8 and 192 kHz works without aliasing into the speech band.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace stt {

class Resampler {
 public:
  // Low-pass cutoff as a fraction of the lower Nyquist frequency.
  static constexpr double kRolloff = 0.9;
  static constexpr int kZeroCrossings = 32;
  static constexpr int kTableOversample = 512;
  static constexpr double kKaiserBeta = 8.0;

  static std::vector<float> resample(const std::vector<float>& in, uint32_t in_rate, uint32_t out_rate);

 private:
  static const std::vector<float>& kernel();
};

}  // namespace stt
