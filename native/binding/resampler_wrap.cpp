// ResamplerWrap: the JS object `Resampler`, StreamingResampler (resampler.h)
// for decoders that run in JavaScript (the WebAssembly Vorbis decoder): mono
// float samples pushed in pieces as they decode, 16-kHz samples out at the
// end, the same as the native decoders' resampling.
#include <algorithm>
#include <cmath>
#include <memory>

#include "bindings.h"
#include "resampler.h"

namespace stt {
namespace {

constexpr uint32_t kOutRate = 16000;

class ResamplerWrap : public Napi::ObjectWrap<ResamplerWrap> {
 public:
  explicit ResamplerWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ResamplerWrap>(info) {
    const double rate = info.Length() > 0 && info[0].IsNumber() ? info[0].As<Napi::Number>().DoubleValue() : 0;
    // The rates the WAV decoder accepts (8-192 kHz), whole numbers.
    if (!(rate >= 8000 && rate <= 192000) || std::floor(rate) != rate) {
      throw Napi::RangeError::New(info.Env(), "Resampler: the input rate must be a whole number of Hz from 8000 to 192000");
    }
    resampler_ = std::make_unique<StreamingResampler>(static_cast<uint32_t>(rate), kOutRate);
  }

  Napi::Value push(const Napi::CallbackInfo& info) {
    if (!resampler_) throw Napi::Error::New(info.Env(), "Resampler: finish() or free() was called");
    if (info.Length() < 1 || !info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array) {
      throw Napi::TypeError::New(info.Env(), "Resampler.push expects a Float32Array");
    }
    Napi::Float32Array in = info[0].As<Napi::Float32Array>();
    resampler_->push(in.Data(), in.ElementLength());
    return info.Env().Undefined();
  }

  // The 16-kHz output; the resampler is spent afterwards.
  Napi::Value finish(const Napi::CallbackInfo& info) {
    if (!resampler_) throw Napi::Error::New(info.Env(), "Resampler: finish() or free() was called");
    std::vector<float> out = resampler_->finish();
    resampler_.reset();
    Napi::Float32Array pcm = Napi::Float32Array::New(info.Env(), out.size());
    std::copy(out.begin(), out.end(), pcm.Data());
    return pcm;
  }

  // Lets go of the buffers now (a decode that stopped part-way), not when the object is collected.
  Napi::Value free(const Napi::CallbackInfo& info) {
    resampler_.reset();
    return info.Env().Undefined();
  }

 private:
  std::unique_ptr<StreamingResampler> resampler_;
};

}  // namespace

Napi::Function define_resampler(Napi::Env env) {
  return ResamplerWrap::DefineClass(env, "Resampler",
                                    {ResamplerWrap::InstanceMethod<&ResamplerWrap::push>("push"),
                                     ResamplerWrap::InstanceMethod<&ResamplerWrap::finish>("finish"),
                                     ResamplerWrap::InstanceMethod<&ResamplerWrap::free>("free")});
}

}  // namespace stt
