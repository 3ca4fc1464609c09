// decodeWav(bytes) -> Promise<{pcm, sampleRate, channels, ...}> on the libuv pool.
#include "bindings.h"
#include "resampler.h"
#include "wav_decoder.h"

namespace stt {
namespace {

class DecodeWavWorker : public Napi::AsyncWorker {
 public:
  DecodeWavWorker(Napi::Env env, Napi::Uint8Array bytes)
      : Napi::AsyncWorker(env, "stt:decodeWav"),
        deferred_(Napi::Promise::Deferred::New(env)),
        bytes_ref_(Napi::Persistent(bytes)),
        data_(bytes.Data()),
        size_(bytes.ByteLength()) {}

  Napi::Promise promise() { return deferred_.Promise(); }

  void Execute() override {
    try {
      decoded_ = decode_wav(data_, size_);
      pcm_ = Resampler::resample(decoded_.mono, decoded_.info.sample_rate, kOutputSampleRate);
      decoded_.mono.clear();
      decoded_.mono.shrink_to_fit();
      if (pcm_.empty()) throw WavError("no_samples", "audio is too short to resample");
    } catch (const WavError& e) {
      code_ = e.code();
      SetError(e.what());
    } catch (const std::exception& e) {
      code_ = "decode_failed";
      SetError(e.what());
    }
  }

  void OnOK() override {
    Napi::Env env = Env();
    Napi::Float32Array pcm = Napi::Float32Array::New(env, pcm_.size());
    std::copy(pcm_.begin(), pcm_.end(), pcm.Data());
    const WavInfo& i = decoded_.info;
    Napi::Object out = Napi::Object::New(env);
    out.Set("pcm", pcm);
    out.Set("sampleRate", i.sample_rate);
    out.Set("channels", i.channels);
    out.Set("bitsPerSample", i.bits_per_sample);
    out.Set("sampleFormat", i.sample_format);
    out.Set("extensible", i.extensible);
    out.Set("durationSeconds", static_cast<double>(i.frames) / i.sample_rate);
    deferred_.Resolve(out);
  }

  void OnError(const Napi::Error& error) override {
    deferred_.Reject(coded_error(Env(), ErrorClass::wav, error.Message(), code_).Value());
  }

 private:
  Napi::Promise::Deferred deferred_;
  Napi::Reference<Napi::Uint8Array> bytes_ref_;  // keeps the upload alive while Execute reads it
  const uint8_t* data_;
  size_t size_;
  DecodedWav decoded_;
  std::vector<float> pcm_;
  std::string code_;
};

}  // namespace

Napi::Value decode_wav(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsTypedArray() ||
      info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
    throw Napi::TypeError::New(info.Env(), "decodeWav expects a Buffer or Uint8Array");
  }
  auto* worker = new DecodeWavWorker(info.Env(), info[0].As<Napi::Uint8Array>());
  Napi::Promise promise = worker->promise();
  worker->Queue();
  return promise;
}

}  // namespace stt
