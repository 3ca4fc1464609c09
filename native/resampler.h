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

  static const std::vector<float>& kernel();
};

// The same resampling fed in pieces, for decoders that produce audio as they
// go: it keeps only the input the next output samples need, so memory is the
// 16-kHz output plus one kernel's width, whatever the input rate and length.
// push() everything, then finish(): the output equals resample() of the
// whole input, sample for sample.
class StreamingResampler {
 public:
  StreamingResampler(uint32_t in_rate, uint32_t out_rate);
  void push(const float* in, size_t count);
  // The output, complete; the resampler must not be used afterwards.
  std::vector<float> finish();
  size_t input_samples() const { return total_in_; }

 private:
  void emit(bool final);

  uint32_t in_rate_, out_rate_;
  double cutoff_, half_width_;
  std::vector<float> window_;  // input samples from index base_ on
  size_t base_ = 0;
  size_t total_in_ = 0;
  std::vector<float> out_;
};

}  // namespace stt
