// Band-limited resampling by windowed-sinc interpolation (Kaiser window), so
// any ratio between 8 and 192 kHz works without aliasing into the speech band.
// Where the two rates have a small common period (44.1 or 48 kHz to 16 kHz,
// 8 to 16 kHz: every rate in use), the kernel is precomputed once per phase
// of that period and each output sample is a plain dot product, which the
// compiler vectorises; any other ratio reads a finely sampled kernel table
// with linear interpolation, as before.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace stt {

class Resampler {
 public:
  // Low-pass cutoff as a fraction of the lower Nyquist frequency.
  static constexpr double kRolloff = 0.9;
  static constexpr int kZeroCrossings = 32;
  static constexpr int kTableOversample = 512;
  static constexpr double kKaiserBeta = 8.0;
  // Largest precomputed filter bank (floats): 44.1 kHz needs 160 phases x 197 taps.
  static constexpr size_t kMaxBankFloats = 1 << 20;

  Resampler(uint32_t in_rate, uint32_t out_rate);

  static std::vector<float> resample(const std::vector<float>& in, uint32_t in_rate, uint32_t out_rate);

  static const std::vector<float>& kernel();

  // How many output samples `in_count` input samples make.
  size_t output_length(size_t in_count) const;
  // Input index of the first and last sample output `n` reads (before clamping to the input).
  long long first_input(size_t n) const;
  long long last_input(size_t n) const;
  // Output sample `n`, reading input samples [0, in_count) through `at(k)`,
  // which `window` holds from index `base` on.
  float output_sample(size_t n, const float* window, size_t base, size_t in_count) const;

 private:
  uint32_t in_rate_, out_rate_;
  double cutoff_, half_width_;
  // Polyphase: output n reads input from (n * step_) / phases_ - half_taps_, phase (n * step_) % phases_.
  uint64_t phases_ = 0, step_ = 0;
  long long half_taps_ = 0;
  size_t taps_ = 0;
  std::vector<float> bank_;  // phases_ x taps_, empty when the ratio has no small period
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
  // Room for the output of `in_count` input samples in all, when the length is known
  // beforehand (a WAV's header): the output is then never copied as it grows.
  void reserve(size_t in_count) { out_.reserve(resampler_.output_length(in_count)); }
  // The output, complete; the resampler must not be used afterwards.
  std::vector<float> finish();
  size_t input_samples() const { return total_in_; }

 private:
  void emit(bool final);

  uint32_t in_rate_, out_rate_;
  Resampler resampler_;
  std::vector<float> window_;  // input samples from index base_ on
  size_t base_ = 0;
  size_t total_in_ = 0;
  std::vector<float> out_;
};

}  // namespace stt
