// VadStreamWrap: the JS object `VadStream`, Silero (whisper.cpp's VAD) run
// over live audio as it arrives. Its LSTM state is carried from one piece to
// the next (whisper_vad_detect_speech_no_reset, the streaming form of the
// API), so a realtime session learns where speech starts and stops without
// running Silero again over what it has already heard. Each piece is judged
// on a libuv pool thread, one piece at a time per stream.
#include <whisper.h>

#include <memory>
#include <vector>

#include "bindings.h"

namespace stt {
namespace {

// Silero's frame at 16 kHz: one probability per 512 samples (32 ms).
constexpr size_t kFrame = 512;

using VadContext = std::unique_ptr<whisper_vad_context, void (*)(whisper_vad_context*)>;

class VadStreamWrap : public Napi::ObjectWrap<VadStreamWrap> {
 public:
  explicit VadStreamWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<VadStreamWrap>(info), ctx_(nullptr, whisper_vad_free) {
    if (info.Length() < 1 || !info[0].IsString() || info[0].As<Napi::String>().Utf8Value().empty()) {
      throw Napi::TypeError::New(info.Env(), "VadStream expects the path of a Silero model file");
    }
    whisper_vad_context_params params = whisper_vad_default_context_params();
    // One small graph per frame: more threads would only add a barrier to each (see speech_map.cpp).
    params.n_threads = 1;
    params.use_gpu = false;
    ctx_.reset(whisper_vad_init_from_file_with_params(info[0].As<Napi::String>().Utf8Value().c_str(), params));
    if (!ctx_) throw Napi::Error::New(info.Env(), "VadStream: whisper.cpp could not load the VAD model file");
    // The LSTM state starts as whatever the allocator left (whisper_vad_detect_speech clears it
    // before each whole-file pass; the streaming form does not): zero it once here.
    whisper_vad_reset_state(ctx_.get());
  }

  // detect(pcm): a promise of one speech probability per 512-sample frame of `pcm`
  // (16-kHz mono, a whole number of frames), judged after every piece before it.
  Napi::Value detect(const Napi::CallbackInfo& info);

  // reset(): forget what was heard (a new utterance after a cleared buffer).
  Napi::Value reset(const Napi::CallbackInfo& info) {
    usable(info.Env());
    whisper_vad_reset_state(ctx_.get());
    return info.Env().Undefined();
  }

  // free(): let go of the model now, not when the object is collected; after a running piece if one is.
  Napi::Value free(const Napi::CallbackInfo& info) {
    if (busy_) free_pending_ = true;
    else ctx_.reset();
    return info.Env().Undefined();
  }

  void finished() {
    busy_ = false;
    if (free_pending_) ctx_.reset();
  }

  whisper_vad_context* context() const { return ctx_.get(); }

 private:
  void usable(Napi::Env env) const {
    if (!ctx_ || free_pending_) throw Napi::Error::New(env, "VadStream: free() was called");
    // Frames must be judged in order, so pieces may not overlap.
    if (busy_) throw Napi::Error::New(env, "VadStream: the previous piece is still being judged");
  }

  VadContext ctx_;
  bool busy_ = false;
  bool free_pending_ = false;
  friend class DetectWorker;
};

class DetectWorker : public Napi::AsyncWorker {
 public:
  DetectWorker(Napi::Env env, VadStreamWrap* stream, Napi::Object owner, std::vector<float> pcm)
      : Napi::AsyncWorker(env, "stt:vadDetect"),
        deferred_(Napi::Promise::Deferred::New(env)),
        owner_(Napi::Persistent(owner)),
        stream_(stream),
        pcm_(std::move(pcm)) {}

  Napi::Promise promise() { return deferred_.Promise(); }

  void Execute() override {
    whisper_vad_context* ctx = stream_->context();
    if (!whisper_vad_detect_speech_no_reset(ctx, pcm_.data(), static_cast<int>(pcm_.size()))) {
      SetError("voice activity detection failed");
      return;
    }
    const int n = whisper_vad_n_probs(ctx);
    if (n != static_cast<int>(pcm_.size() / kFrame)) {
      SetError("voice activity detection gave an unexpected number of frames");
      return;
    }
    const float* probs = whisper_vad_probs(ctx);
    probs_.assign(probs, probs + n);
  }

  void OnOK() override {
    stream_->finished();
    Napi::Float32Array out = Napi::Float32Array::New(Env(), probs_.size());
    std::copy(probs_.begin(), probs_.end(), out.Data());
    deferred_.Resolve(out);
  }

  void OnError(const Napi::Error& e) override {
    stream_->finished();
    deferred_.Reject(e.Value());
  }

 private:
  Napi::Promise::Deferred deferred_;
  Napi::ObjectReference owner_;  // keeps the stream alive while its piece is judged
  VadStreamWrap* stream_;
  std::vector<float> pcm_;
  std::vector<float> probs_;
};

Napi::Value VadStreamWrap::detect(const Napi::CallbackInfo& info) {
  usable(info.Env());
  if (info.Length() < 1 || !info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array) {
    throw Napi::TypeError::New(info.Env(), "VadStream.detect expects a Float32Array");
  }
  Napi::Float32Array in = info[0].As<Napi::Float32Array>();
  if (in.ElementLength() == 0 || in.ElementLength() % kFrame != 0) {
    throw Napi::RangeError::New(info.Env(), "VadStream.detect takes a whole number of 512-sample frames");
  }
  // A copy: the caller may reuse its array while the piece is judged.
  std::vector<float> pcm(in.Data(), in.Data() + in.ElementLength());
  auto* worker = new DetectWorker(info.Env(), this, info.This().As<Napi::Object>(), std::move(pcm));
  busy_ = true;
  Napi::Promise promise = worker->promise();
  worker->Queue();
  return promise;
}

}  // namespace

Napi::Function define_vad_stream(Napi::Env env) {
  return VadStreamWrap::DefineClass(env, "VadStream",
                                    {VadStreamWrap::InstanceMethod<&VadStreamWrap::detect>("detect"),
                                     VadStreamWrap::InstanceMethod<&VadStreamWrap::reset>("reset"),
                                     VadStreamWrap::InstanceMethod<&VadStreamWrap::free>("free")});
}

}  // namespace stt
