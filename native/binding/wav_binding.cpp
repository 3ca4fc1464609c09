// decodeWav(bytes) and decodeAudio(bytes, maxSeconds) -> Promise<{pcm,
// sampleRate, channels, ...}> on the libuv pool: WAV only, or any container
// audio_decoder.cpp reads, resampled to 16 kHz mono.
#include <cmath>
#include <limits>

#include "audio_decoder.h"
#include "bindings.h"
#include "resampler.h"
#include "wav_decoder.h"

namespace stt {
namespace {

class DecodeWavWorker : public Napi::AsyncWorker {
 public:
  // any_format: every container audio_decoder.cpp reads, refused past max_seconds; otherwise WAV only.
  DecodeWavWorker(Napi::Env env, Napi::Uint8Array bytes, bool any_format, double max_seconds)
      : Napi::AsyncWorker(env, any_format ? "stt:decodeAudio" : "stt:decodeWav"),
        deferred_(Napi::Promise::Deferred::New(env)),
        bytes_ref_(Napi::Persistent(bytes)),
        data_(bytes.Data()),
        size_(bytes.ByteLength()),
        any_format_(any_format),
        max_seconds_(max_seconds) {}

  Napi::Promise promise() { return deferred_.Promise(); }

  void Execute() override {
    try {
      decoded_ = any_format_ ? decode_audio(data_, size_, max_seconds_) : decode_wav_audio(data_, size_, max_seconds_);
      pcm_ = std::move(decoded_.pcm);  // already 16 kHz mono
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
    const WavInfo& i = decoded_.wav;
    Napi::Object out = Napi::Object::New(env);
    out.Set("pcm", pcm);
    out.Set("container", decoded_.container);
    out.Set("codec", decoded_.codec);
    out.Set("sampleRate", decoded_.sample_rate);
    out.Set("channels", decoded_.channels);
    out.Set("bitsPerSample", i.bits_per_sample);
    out.Set("sampleFormat", i.sample_format);
    out.Set("extensible", i.extensible);
    out.Set("durationSeconds", static_cast<double>(decoded_.frames) / decoded_.sample_rate);
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
  bool any_format_;
  double max_seconds_;
  DecodedAudio decoded_;
  std::vector<float> pcm_;
  std::string code_;
};

}  // namespace

Napi::Value decode_wav(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsTypedArray() ||
      info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
    throw Napi::TypeError::New(info.Env(), "decodeWav expects a Buffer or Uint8Array");
  }
  auto* worker = new DecodeWavWorker(info.Env(), info[0].As<Napi::Uint8Array>(), false, std::numeric_limits<double>::infinity());
  Napi::Promise promise = worker->promise();
  worker->Queue();
  return promise;
}

Napi::Value decode_audio(const Napi::CallbackInfo& info) {
  if (info.Length() < 2 || !info[0].IsTypedArray() ||
      info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array || !info[1].IsNumber()) {
    throw Napi::TypeError::New(info.Env(), "decodeAudio expects a Buffer or Uint8Array and the longest duration in seconds");
  }
  const double max_seconds = info[1].As<Napi::Number>().DoubleValue();
  if (!(max_seconds > 0) || !std::isfinite(max_seconds)) throw Napi::RangeError::New(info.Env(), "decodeAudio: the longest duration must be a positive number of seconds");
  auto* worker = new DecodeWavWorker(info.Env(), info[0].As<Napi::Uint8Array>(), true, max_seconds);
  Napi::Promise promise = worker->promise();
  worker->Queue();
  return promise;
}

}  // namespace stt
