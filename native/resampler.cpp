#include "resampler.h"

#include <algorithm>
#include <cmath>

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

std::vector<float> Resampler::resample(const std::vector<float>& in, uint32_t in_rate, uint32_t out_rate) {
  if (in_rate == out_rate || in.empty()) return in;
  const std::vector<float>& table = kernel();
  const double ratio = static_cast<double>(out_rate) / in_rate;
  const double cutoff = std::min(1.0, ratio) * kRolloff;  // in cycles per input sample, relative to Nyquist
  const double half_width = kZeroCrossings / cutoff;      // in input samples
  const size_t out_len = static_cast<size_t>(static_cast<uint64_t>(in.size()) * out_rate / in_rate);
  const long long last = static_cast<long long>(in.size()) - 1;
  const double table_limit = kZeroCrossings * kTableOversample;

  std::vector<float> out(out_len);
  for (size_t n = 0; n < out_len; ++n) {
    const double t = static_cast<double>(n) * in_rate / out_rate;
    const long long k0 = std::max(0LL, static_cast<long long>(std::ceil(t - half_width)));
    const long long k1 = std::min(last, static_cast<long long>(std::floor(t + half_width)));
    double acc = 0.0;
    for (long long k = k0; k <= k1; ++k) {
      const double pos = std::fabs(static_cast<double>(k) - t) * cutoff * kTableOversample;
      if (pos >= table_limit) continue;
      const size_t i = static_cast<size_t>(pos);
      const double frac = pos - static_cast<double>(i);
      const double w = table[i] + (table[i + 1] - table[i]) * frac;
      acc += w * in[static_cast<size_t>(k)];
    }
    out[n] = static_cast<float>(acc * cutoff);
  }
  return out;
}

StreamingResampler::StreamingResampler(uint32_t in_rate, uint32_t out_rate)
    : in_rate_(in_rate), out_rate_(out_rate) {
  const double ratio = static_cast<double>(out_rate) / in_rate;
  cutoff_ = std::min(1.0, ratio) * Resampler::kRolloff;
  half_width_ = Resampler::kZeroCrossings / cutoff_;
}

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
  const std::vector<float>& table = Resampler::kernel();
  const double table_limit = Resampler::kZeroCrossings * Resampler::kTableOversample;
  const size_t out_len = static_cast<size_t>(static_cast<uint64_t>(total_in_) * out_rate_ / in_rate_);
  const long long last = static_cast<long long>(total_in_) - 1;
  for (size_t n = out_.size(); n < out_len; ++n) {
    const double t = static_cast<double>(n) * in_rate_ / out_rate_;
    const long long hi = static_cast<long long>(std::floor(t + half_width_));
    if (!final && hi > last) break;  // needs input that has not arrived
    const long long k0 = std::max(0LL, static_cast<long long>(std::ceil(t - half_width_)));
    const long long k1 = std::min(last, hi);
    double acc = 0.0;
    for (long long k = k0; k <= k1; ++k) {
      const double pos = std::fabs(static_cast<double>(k) - t) * cutoff_ * Resampler::kTableOversample;
      if (pos >= table_limit) continue;
      const size_t i = static_cast<size_t>(pos);
      const double frac = pos - static_cast<double>(i);
      const double w = table[i] + (table[i + 1] - table[i]) * frac;
      acc += w * window_[static_cast<size_t>(k) - base_];
    }
    out_.push_back(static_cast<float>(acc * cutoff_));
  }
  // The next output sample starts at ceil(t - half_width): older input is done with.
  const double t_next = static_cast<double>(out_.size()) * in_rate_ / out_rate_;
  const long long keep_from = std::max(0LL, static_cast<long long>(std::ceil(t_next - half_width_)) - 1);
  if (static_cast<size_t>(keep_from) > base_) {
    const size_t drop = std::min(window_.size(), static_cast<size_t>(keep_from) - base_);
    window_.erase(window_.begin(), window_.begin() + static_cast<long>(drop));
    base_ += drop;
  }
}

}  // namespace stt
