#include "resampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace stt {
namespace {

double bessel_i0(double x) {
  double sum = 1.0, term = 1.0;
  for (int k = 1; k < 50; ++k) {
    term *= (x / (2.0 * k)) * (x / (2.0 * k));
    sum += term;
    if (term < sum * 1e-12) break;
  }
  return sum;
}

// The kernel at `pos` table steps from its centre: the table read with linear interpolation (0 past its end).
double kernel_at(const std::vector<float>& table, double pos) {
  const double table_limit = Resampler::kZeroCrossings * Resampler::kTableOversample;
  if (pos >= table_limit) return 0.0;
  const size_t i = static_cast<size_t>(pos);
  const double frac = pos - static_cast<double>(i);
  return table[i] + (table[i + 1] - table[i]) * frac;
}

// Eight running sums, so the compiler can keep them in one vector register.
float dot(const float* a, const float* b, size_t n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (size_t i = 0; i < n; i += 8) {
    for (int l = 0; l < 8; ++l) acc[l] += a[i + l] * b[i + l];
  }
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

}  // namespace

const std::vector<float>& Resampler::kernel() {
  // One side of the symmetric kernel, sampled kTableOversample times per zero crossing.
  static const std::vector<float> table = [] {
    const int n = kZeroCrossings * kTableOversample;
    std::vector<float> t(n + 2, 0.0f);
    const double denom = bessel_i0(kKaiserBeta);
    for (int i = 0; i <= n; ++i) {
      const double x = static_cast<double>(i) / kTableOversample;
      const double sinc = i == 0 ? 1.0 : std::sin(M_PI * x) / (M_PI * x);
      const double r = x / kZeroCrossings;
      const double window = bessel_i0(kKaiserBeta * std::sqrt(std::max(0.0, 1.0 - r * r))) / denom;
      t[i] = static_cast<float>(sinc * window);
    }
    return t;
  }();
  return table;
}

Resampler::Resampler(uint32_t in_rate, uint32_t out_rate) : in_rate_(in_rate), out_rate_(out_rate) {
  const double ratio = static_cast<double>(out_rate) / in_rate;
  cutoff_ = std::min(1.0, ratio) * kRolloff;  // in cycles per input sample, relative to Nyquist
  half_width_ = kZeroCrossings / cutoff_;      // in input samples
  if (in_rate == out_rate) return;
  const uint64_t g = std::gcd(in_rate, out_rate);
  const uint64_t phases = out_rate / g, step = in_rate / g;
  // Output n sits at input time n * step / phases: its integer part i0 and
  // phase p. It reads input i0 - H .. i0 + H + 1 (H = ceil(half width)),
  // padded to a multiple of 8 taps with zero weights.
  const long long h = static_cast<long long>(std::ceil(half_width_));
  const size_t taps = (static_cast<size_t>(2 * h + 2) + 7) / 8 * 8;
  if (phases * taps > kMaxBankFloats) return;  // no small period: the table path
  const std::vector<float>& table = kernel();
  phases_ = phases;
  step_ = step;
  half_taps_ = h;
  taps_ = taps;
  bank_.assign(phases * taps, 0.0f);
  for (uint64_t p = 0; p < phases; ++p) {
    for (size_t j = 0; j < taps; ++j) {
      const double offset = static_cast<double>(static_cast<long long>(j) - h) - static_cast<double>(p) / phases;
      bank_[p * taps + j] = static_cast<float>(kernel_at(table, std::fabs(offset) * cutoff_ * kTableOversample) * cutoff_);
    }
  }
}

size_t Resampler::output_length(size_t in_count) const {
  return static_cast<size_t>(static_cast<uint64_t>(in_count) * out_rate_ / in_rate_);
}

long long Resampler::first_input(size_t n) const {
  if (!bank_.empty()) return static_cast<long long>(n * step_ / phases_) - half_taps_;
  return static_cast<long long>(std::ceil(static_cast<double>(n) * in_rate_ / out_rate_ - half_width_));
}

long long Resampler::last_input(size_t n) const {
  if (!bank_.empty()) return first_input(n) + static_cast<long long>(taps_) - 1;
  return static_cast<long long>(std::floor(static_cast<double>(n) * in_rate_ / out_rate_ + half_width_));
}

float Resampler::output_sample(size_t n, const float* window, size_t base, size_t in_count) const {
  const long long last = static_cast<long long>(in_count) - 1;
  if (!bank_.empty()) {
    const long long k0 = first_input(n);
    const float* w = &bank_[(n * step_ % phases_) * taps_];
    if (k0 >= 0 && k0 + static_cast<long long>(taps_) - 1 <= last) return dot(w, window + (k0 - static_cast<long long>(base)), taps_);
    // Near either end of the input: the taps that fall outside it are left out.
    float acc = 0.0f;
    for (size_t j = 0; j < taps_; ++j) {
      const long long k = k0 + static_cast<long long>(j);
      if (k >= 0 && k <= last) acc += w[j] * window[k - static_cast<long long>(base)];
    }
    return acc;
  }
  const std::vector<float>& table = kernel();
  const double t = static_cast<double>(n) * in_rate_ / out_rate_;
  const long long k0 = std::max(0LL, first_input(n));
  const long long k1 = std::min(last, last_input(n));
  double acc = 0.0;
  for (long long k = k0; k <= k1; ++k) {
    acc += kernel_at(table, std::fabs(static_cast<double>(k) - t) * cutoff_ * kTableOversample) * window[k - static_cast<long long>(base)];
  }
  return static_cast<float>(acc * cutoff_);
}

std::vector<float> Resampler::resample(const std::vector<float>& in, uint32_t in_rate, uint32_t out_rate) {
  if (in_rate == out_rate || in.empty()) return in;
  const Resampler r(in_rate, out_rate);
  std::vector<float> out(r.output_length(in.size()));
  for (size_t n = 0; n < out.size(); ++n) out[n] = r.output_sample(n, in.data(), 0, in.size());
  return out;
}

StreamingResampler::StreamingResampler(uint32_t in_rate, uint32_t out_rate)
    : in_rate_(in_rate), out_rate_(out_rate), resampler_(in_rate, out_rate) {}

void StreamingResampler::push(const float* in, size_t count) {
  window_.insert(window_.end(), in, in + count);
  total_in_ += count;
  emit(false);
}

std::vector<float> StreamingResampler::finish() {
  if (in_rate_ == out_rate_) {
    out_.insert(out_.end(), window_.begin(), window_.end());
    window_.clear();
  } else {
    emit(true);
  }
  return std::move(out_);
}

// Computes every output sample whose inputs have all arrived (all of the rest
// when `final`), exactly as Resampler::resample does, then drops the input no
// later output sample needs.
void StreamingResampler::emit(bool final) {
  if (in_rate_ == out_rate_) {
    out_.insert(out_.end(), window_.begin(), window_.end());
    base_ += window_.size();
    window_.clear();
    return;
  }
  const size_t out_len = resampler_.output_length(total_in_);
  const long long last = static_cast<long long>(total_in_) - 1;
  for (size_t n = out_.size(); n < out_len; ++n) {
    if (!final && resampler_.last_input(n) > last) break;  // needs input that has not arrived
    out_.push_back(resampler_.output_sample(n, window_.data(), base_, total_in_));
  }
  // The next output sample reads from first_input(next) on: older input is done with.
  const long long keep_from = std::max(0LL, resampler_.first_input(out_.size()) - 1);
  if (static_cast<size_t>(keep_from) > base_) {
    const size_t drop = std::min(window_.size(), static_cast<size_t>(keep_from) - base_);
    window_.erase(window_.begin(), window_.begin() + static_cast<long>(drop));
    base_ += drop;
  }
}

}  // namespace stt
