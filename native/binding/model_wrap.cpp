// Model: the JS object for one loaded model. Loading and transcription run as
// AsyncWorkers; every worker holds its own reference to the engine, so
// dispose() while jobs run only aborts them and the engine is freed after the
// last one finishes. Whoever drops the last reference frees the engine (its
// states, contexts and weights: a stall that grows with the model), so every
// drop happens in a worker's Execute, never on the main thread.
#include <memory>

#include "bindings.h"

namespace stt {
namespace {

struct Loaded {
  std::shared_ptr<Engine> engine;
  int64_t external_bytes;
};

std::string get_string(const Napi::Object& o, const char* key, const std::string& fallback = "") {
  Napi::Value v = o.Get(key);
  return v.IsString() ? v.As<Napi::String>().Utf8Value() : fallback;
}
bool get_bool(const Napi::Object& o, const char* key, bool fallback) {
  Napi::Value v = o.Get(key);
  return v.IsBoolean() ? v.As<Napi::Boolean>().Value() : fallback;
}
double get_number(const Napi::Object& o, const char* key, double fallback) {
  Napi::Value v = o.Get(key);
  return v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : fallback;
}

static Napi::Array int_array(Napi::Env env, const std::vector<int>& values) {
  Napi::Array out = Napi::Array::New(env, values.size());
  for (size_t j = 0; j < values.size(); ++j) out.Set(static_cast<uint32_t>(j), values[j]);
  return out;
}

// A checkpoint as src/native/types.ts has it (ResumePoint), both ways.
// Checked in src/native/model.ts; here only read as numbers.
ResumePoint resume_point_from(const Napi::Object& o) {
  ResumePoint r;
  r.set = true;
  r.position = static_cast<int64_t>(get_number(o, "position", 0));
  r.language = get_string(o, "language");
  Napi::Value prompt = o.Get("prompt");
  if (prompt.IsArray()) {
    const Napi::Array a = prompt.As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); ++i) r.prompt.push_back(static_cast<int>(a.Get(i).As<Napi::Number>().Int32Value()));
  }
  Napi::Value rngs = o.Get("rngs");
  if (rngs.IsArray()) {
    const Napi::Array a = rngs.As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); ++i) r.rngs.push_back(a.Get(i).As<Napi::String>().Utf8Value());
  }
  Napi::Value clock = o.Get("clock");
  if (clock.IsArray()) {
    const Napi::Array a = clock.As<Napi::Array>();
    for (uint32_t i = 0; i < 3 && i < a.Length(); ++i) r.clock[i] = a.Get(i).As<Napi::Number>().Int64Value();
  }
  return r;
}

Napi::Object resume_point_to_js(Napi::Env env, const ResumePoint& r) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("position", static_cast<double>(r.position));
  out.Set("prompt", int_array(env, r.prompt));
  Napi::Array clock = Napi::Array::New(env, 3);
  for (uint32_t i = 0; i < 3; ++i) clock.Set(i, static_cast<double>(r.clock[i]));
  out.Set("clock", clock);
  Napi::Array rngs = Napi::Array::New(env, r.rngs.size());
  for (uint32_t i = 0; i < r.rngs.size(); ++i) rngs.Set(i, r.rngs[i]);
  out.Set("rngs", rngs);
  out.Set("language", r.language);
  out.Set("seconds", r.seconds);
  return out;
}

TranscribeOptions options_from(const Napi::Object& o) {
  TranscribeOptions t;
  t.language = get_string(o, "language");
  t.translate = get_bool(o, "translate", false);
  t.prompt = get_string(o, "prompt");
  t.temperature = static_cast<float>(get_number(o, "temperature", 0.0));
  t.temperature_fallback = get_bool(o, "temperatureFallback", true);
  t.beam_size = static_cast<int>(get_number(o, "beamSize", 1));
  t.threads = static_cast<int>(get_number(o, "threads", 1));
  t.decoder_threads = static_cast<int>(get_number(o, "decoderThreads", 0));
  t.word_timestamps = get_bool(o, "wordTimestamps", false);
  t.token_logprobs = get_bool(o, "tokenLogprobs", false);
  t.speech_gate = get_bool(o, "speechGate", false);
  t.max_tokens = static_cast<int>(get_number(o, "maxTokens", 0));
  t.audio_ctx = static_cast<int>(get_number(o, "audioCtx", 0));
  t.piece_seconds = get_number(o, "pieceSeconds", 0.0);
  Napi::Value from = o.Get("resumeFrom");
  if (from.IsObject()) t.resume_from = resume_point_from(from.As<Napi::Object>());
  Napi::Value vad = o.Get("vad");
  if (vad.IsObject()) {
    const Napi::Object v = vad.As<Napi::Object>();
    t.vad.model_path = get_string(v, "modelPath");
    t.vad.threshold = static_cast<float>(get_number(v, "threshold", t.vad.threshold));
    t.vad.min_speech_ms = static_cast<int>(get_number(v, "minSpeechMs", t.vad.min_speech_ms));
    t.vad.min_silence_ms = static_cast<int>(get_number(v, "minSilenceMs", t.vad.min_silence_ms));
    t.vad.speech_pad_ms = static_cast<int>(get_number(v, "speechPadMs", t.vad.speech_pad_ms));
  }
  return t;
}


Napi::Object segment_to_js(Napi::Env env, const Segment& s) {
  Napi::Object seg = Napi::Object::New(env);
  seg.Set("start", s.start);
  seg.Set("end", s.end);
  seg.Set("text", s.text);
  seg.Set("tokens", int_array(env, s.tokens));
  seg.Set("tokensWithTimestamps", int_array(env, s.tokens_with_timestamps));
  seg.Set("seek", s.seek);
  seg.Set("temperature", s.temperature);
  seg.Set("avgLogprob", s.avg_logprob);
  seg.Set("noSpeechProb", s.no_speech_prob);
  if (!s.words.empty()) {
    Napi::Array words = Napi::Array::New(env, s.words.size());
    for (size_t j = 0; j < s.words.size(); ++j) {
      Napi::Object w = Napi::Object::New(env);
      w.Set("word", s.words[j].text);
      w.Set("start", s.words[j].start);
      w.Set("end", s.words[j].end);
      w.Set("probability", s.words[j].probability);
      words.Set(static_cast<uint32_t>(j), w);
    }
    seg.Set("words", words);
  }
  if (!s.token_logprobs.empty()) {
    Napi::Array logprobs = Napi::Array::New(env, s.token_logprobs.size());
    for (size_t j = 0; j < s.token_logprobs.size(); ++j) {
      Napi::Object t = Napi::Object::New(env);
      // Bytes, not a string: a token may end inside a UTF-8 character.
      t.Set("bytes", Napi::Buffer<char>::Copy(env, s.token_bytes[j].data(), s.token_bytes[j].size()));
      t.Set("logprob", s.token_logprobs[j]);
      logprobs.Set(static_cast<uint32_t>(j), t);
    }
    seg.Set("tokenLogprobs", logprobs);
  }
  return seg;
}

Napi::Array segments_to_js(Napi::Env env, const std::vector<Segment>& segments) {
  Napi::Array out = Napi::Array::New(env, segments.size());
  for (size_t i = 0; i < segments.size(); ++i) out.Set(static_cast<uint32_t>(i), segment_to_js(env, segments[i]));
  return out;
}

Napi::Object result_to_js(Napi::Env env, const TranscribeResult& r) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("text", r.text);
  out.Set("language", r.language);
  out.Set("duration", r.duration);
  out.Set("noSpeech", r.no_speech);
  out.Set("gatedSegments", r.gated_segments);
  out.Set("segments", segments_to_js(env, r.segments));
  return out;
}

class ModelWrap : public Napi::ObjectWrap<ModelWrap> {
 public:
  explicit ModelWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ModelWrap>(info) {
    if (info.Length() < 1 || !info[0].IsExternal()) {
      throw Napi::TypeError::New(info.Env(), "Model objects are created by loadModel()");
    }
    std::unique_ptr<Loaded> loaded(info[0].As<Napi::External<Loaded>>().Data());
    engine_ = loaded->engine;
    external_bytes_ = loaded->external_bytes;
    Napi::MemoryManagement::AdjustExternalMemory(info.Env(), external_bytes_);
  }

  ~ModelWrap() override { release(); }

  Napi::Value transcribe(const Napi::CallbackInfo& info);

  // dispose() -> Promise<void>, settled once this object's reference is
  // dropped on a pool thread (the engine itself is freed there too, or by the
  // last job still holding it, also on its pool thread).
  Napi::Value dispose(const Napi::CallbackInfo& info);

  Napi::Value family(const Napi::CallbackInfo& info) {
    return engine_ ? Napi::String::New(info.Env(), engine_->family()) : info.Env().Null();
  }

  Napi::Value stats(const Napi::CallbackInfo& info) {
    Napi::Object out = Napi::Object::New(info.Env());
    const EngineStats s = engine_ ? engine_->stats() : EngineStats{};
    out.Set("statesCreated", static_cast<double>(s.states_created));
    out.Set("statesIdle", static_cast<double>(s.states_idle));
    out.Set("jobsRunning", static_cast<double>(s.jobs_running));
    out.Set("disposed", !engine_);
    return out;
  }

 private:
  // Only the finalizer frees inline: it runs when a model is garbage-collected
  // without dispose() (the engine always disposes) or during environment
  // teardown, where no work can be queued any more.
  void release() {
    if (!engine_) return;
    engine_.reset();
    forget_external_memory();
  }
  // Finalizers may run during environment teardown, where adjusting is pointless but harmless.
  void forget_external_memory() { Napi::MemoryManagement::AdjustExternalMemory(Env(), -external_bytes_); }

  std::shared_ptr<Engine> engine_;
  int64_t external_bytes_ = 0;
};

// A JS callback called from the job's thread with values of T, in order,
// through a thread-safe function; Deliver converts one value (and frees it)
// on the JS thread. `closed`: once a call returns napi_closing (the
// environment is being torn down) the function may already be gone, and
// neither another call nor Release() may touch it. Only the job's thread
// uses it after creation.
template <typename T, void (*Deliver)(Napi::Env, Napi::Function, T*)>
struct CallbackSink {
  Napi::ThreadSafeFunction fn;
  bool closed = false;

  // The sink for options[key] when that is a function; null otherwise.
  static std::shared_ptr<CallbackSink> open(Napi::Env env, const Napi::Value& options, const char* key, const char* name) {
    if (!options.IsObject()) return nullptr;
    Napi::Value given = options.As<Napi::Object>().Get(key);
    if (!given.IsFunction()) return nullptr;
    auto sink = std::make_shared<CallbackSink>();
    sink->fn = Napi::ThreadSafeFunction::New(env, given.As<Napi::Function>(), name, 0, 1);
    return sink;
  }
  void send(T value) {
    if (closed) return;
    auto owned = std::make_unique<T>(std::move(value));
    const napi_status status = fn.NonBlockingCall(owned.get(), Deliver);
    if (status == napi_ok) owned.release();
    else if (status == napi_closing) closed = true;
  }
  void release() {
    if (!closed) fn.Release();  // calls already queued are still delivered
    closed = true;
  }
};

// Streaming: a JS onSegment(index, text) per final segment. Calls queue in
// order; the JS side (src/native/model.ts) ignores any that land after the promise settles.
struct SegmentText {
  int index;
  std::string text;
};

void deliver_segment(Napi::Env env, Napi::Function fn, SegmentText* segment) {
  std::unique_ptr<SegmentText> owned(segment);  // freed even if the call throws
  if (env != nullptr && fn != nullptr) fn.Call({Napi::Number::New(env, owned->index), Napi::String::New(env, owned->text)});
}

using SegmentSink = CallbackSink<SegmentText, deliver_segment>;

std::shared_ptr<SegmentSink> segment_sink(Napi::Env env, const Napi::Value& options, TranscribeOptions& o) {
  auto sink = SegmentSink::open(env, options, "onSegment", "stt:segment");
  if (sink) o.on_segment = [sink](int index, const std::string& text) { sink->send({index, text}); };
  return sink;
}

// Long recordings: a JS onCheckpoint(point, segments, gated) at each point a later run could resume from.
struct Checkpoint {
  ResumePoint point;
  std::vector<Segment> segments;
  int gated;
};

void deliver_checkpoint(Napi::Env env, Napi::Function fn, Checkpoint* checkpoint) {
  std::unique_ptr<Checkpoint> owned(checkpoint);
  if (env != nullptr && fn != nullptr) fn.Call({resume_point_to_js(env, owned->point), segments_to_js(env, owned->segments), Napi::Number::New(env, owned->gated)});
}

using CheckpointSink = CallbackSink<Checkpoint, deliver_checkpoint>;

std::shared_ptr<CheckpointSink> checkpoint_sink(Napi::Env env, const Napi::Value& options, TranscribeOptions& o) {
  auto sink = CheckpointSink::open(env, options, "onCheckpoint", "stt:checkpoint");
  if (sink) o.on_checkpoint = [sink](const ResumePoint& point, const std::vector<Segment>& segments, int gated) { sink->send({point, segments, gated}); };
  return sink;
}

class TranscribeWorker : public Napi::AsyncWorker {
 public:
  TranscribeWorker(Napi::Env env, std::shared_ptr<Engine> engine, Napi::Float32Array pcm, TranscribeOptions options,
                   std::shared_ptr<SegmentSink> segments, std::shared_ptr<CheckpointSink> checkpoints)
      : Napi::AsyncWorker(env, "stt:transcribe"),
        deferred_(Napi::Promise::Deferred::New(env)),
        engine_(std::move(engine)),
        pcm_ref_(Napi::Persistent(pcm)),
        pcm_(pcm.Data()),
        n_samples_(pcm.ElementLength()),
        options_(std::move(options)),
        segments_(std::move(segments)),
        checkpoints_(std::move(checkpoints)) {}

  Napi::Promise promise() { return deferred_.Promise(); }

  void Execute() override {
    if (options_.control) options_.control->mark_started();
    try {
      result_ = engine_->transcribe(pcm_, n_samples_, options_);
    } catch (const AbortedError& e) {
      code_ = "aborted";
      SetError(e.what());
    } catch (const std::exception& e) {
      code_ = "runtime_error";
      SetError(e.what());
    }
    options_.on_segment = nullptr;
    options_.on_checkpoint = nullptr;
    if (segments_) segments_->release();
    if (checkpoints_) checkpoints_->release();
    engine_.reset();  // the last job of a disposed model frees it here, off the main thread
  }

  void OnOK() override { deferred_.Resolve(result_to_js(Env(), result_)); }
  void OnError(const Napi::Error& error) override {
    deferred_.Reject(coded_error(Env(), ErrorClass::transcription, error.Message(), code_).Value());
  }

 private:
  Napi::Promise::Deferred deferred_;
  std::shared_ptr<Engine> engine_;
  Napi::Reference<Napi::Float32Array> pcm_ref_;  // zero-copy: the samples stay in the JS buffer
  const float* pcm_;
  size_t n_samples_;
  TranscribeOptions options_;
  std::shared_ptr<SegmentSink> segments_;  // null unless the caller streams
  std::shared_ptr<CheckpointSink> checkpoints_;  // null unless the caller asked for checkpoints
  TranscribeResult result_;
  std::string code_;
};

// Drops one reference to an engine on a pool thread.
class ReleaseWorker : public Napi::AsyncWorker {
 public:
  ReleaseWorker(Napi::Env env, std::shared_ptr<Engine> engine)
      : Napi::AsyncWorker(env, "stt:dispose"), deferred_(Napi::Promise::Deferred::New(env)), engine_(std::move(engine)) {}

  Napi::Promise promise() { return deferred_.Promise(); }
  void Execute() override { engine_.reset(); }
  void OnOK() override {
    // A worker thread torn down right after dispose() cannot settle promises
    // any more (and nothing waits on this one then): ignore that failure.
    try {
      deferred_.Resolve(Env().Undefined());
    } catch (const Napi::Error&) {
    }
  }

 private:
  Napi::Promise::Deferred deferred_;
  std::shared_ptr<Engine> engine_;
};

Napi::Value ModelWrap::dispose(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!engine_) {
    auto done = Napi::Promise::Deferred::New(env);
    done.Resolve(env.Undefined());
    return done.Promise();
  }
  engine_->abort_all();
  auto* worker = new ReleaseWorker(env, std::move(engine_));
  engine_.reset();
  forget_external_memory();
  Napi::Promise promise = worker->promise();
  worker->Queue();
  return promise;
}

Napi::Value ModelWrap::transcribe(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!engine_) throw coded_error(env, ErrorClass::transcription, "model has been disposed", "disposed");
  if (info.Length() < 1 || !info[0].IsTypedArray() ||
      info[0].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array) {
    throw Napi::TypeError::New(env, "transcribe expects a Float32Array of 16 kHz mono samples");
  }
  if (info[0].As<Napi::Float32Array>().ElementLength() > 2147483647u) {
    throw coded_error(env, ErrorClass::transcription, "more samples than the engines accept (INT32_MAX)", "runtime_error");
  }
  TranscribeOptions options = info.Length() > 1 && info[1].IsObject() ? options_from(info[1].As<Napi::Object>())
                                                                      : TranscribeOptions{};
  options.control = job_control_of(info.Length() > 2 ? info[2] : env.Undefined());
  const Napi::Value given = info.Length() > 1 ? info[1] : env.Undefined();
  std::shared_ptr<SegmentSink> segments = segment_sink(env, given, options);
  std::shared_ptr<CheckpointSink> checkpoints = checkpoint_sink(env, given, options);
  auto* worker = new TranscribeWorker(env, engine_, info[0].As<Napi::Float32Array>(), std::move(options), std::move(segments),
                                      std::move(checkpoints));
  Napi::Promise promise = worker->promise();
  worker->Queue();
  return promise;
}

class LoadModelWorker : public Napi::AsyncWorker {
 public:
  LoadModelWorker(Napi::Env env, std::string path, std::string family, int64_t bytes)
      : Napi::AsyncWorker(env, "stt:loadModel"),
        deferred_(Napi::Promise::Deferred::New(env)),
        path_(std::move(path)),
        family_(std::move(family)),
        bytes_(bytes) {}

  Napi::Promise promise() { return deferred_.Promise(); }

  void Execute() override {
    try {
      engine_ = family_ == "parakeet" ? load_parakeet_engine(path_) : load_whisper_engine(path_);
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }

  void OnOK() override {
    Napi::Env env = Env();
    auto* loaded = new Loaded{std::move(engine_), bytes_};
    Napi::FunctionReference& ctor = env.GetInstanceData<AddonData>()->model_constructor;
    deferred_.Resolve(ctor.New({Napi::External<Loaded>::New(env, loaded)}));
  }
  void OnError(const Napi::Error& error) override {
    deferred_.Reject(coded_error(Env(), ErrorClass::model_load, error.Message(), "model_load_failed").Value());
  }

 private:
  Napi::Promise::Deferred deferred_;
  std::string path_, family_;
  int64_t bytes_;
  std::shared_ptr<Engine> engine_;
};

}  // namespace

Napi::Function define_model(Napi::Env env) {
  return ModelWrap::DefineClass(env, "Model",
                                {ModelWrap::InstanceMethod<&ModelWrap::transcribe>("transcribe"),
                                 ModelWrap::InstanceMethod<&ModelWrap::dispose>("dispose"),
                                 ModelWrap::InstanceMethod<&ModelWrap::stats>("stats"),
                                 ModelWrap::InstanceAccessor<&ModelWrap::family>("family")});
}

// loadModel(path, family, externalBytes) -> Promise<Model>. The TS layer has
// already checked the file's structure and read its family.
Napi::Value load_model(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsString() || !info[1].IsString() || !info[2].IsNumber()) {
    throw Napi::TypeError::New(env, "loadModel(path, family, externalBytes)");
  }
  auto* worker = new LoadModelWorker(env, info[0].As<Napi::String>().Utf8Value(), info[1].As<Napi::String>().Utf8Value(),
                                     info[2].As<Napi::Number>().Int64Value());
  Napi::Promise promise = worker->promise();
  worker->Queue();
  return promise;
}

}  // namespace stt
