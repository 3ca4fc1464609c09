// Module entry: registers the surface typed in src/native/binding.ts.
#include <whisper.h>

#include <mutex>

#include "bindings.h"
#include "graph_hooks.h"
#include "state_pool.h"

// Defined in the patched copy of whisper.cpp (cmake/whisper-patches.cmake): an
// unpatched whisper.cpp leaves it undefined and the addon does not link.
extern "C" const char* stt_whisper_patches(void);

namespace stt {
namespace {

Napi::Value system_info(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), whisper_print_system_info());
}

Napi::Value engines_freed_on_js_thread(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), g_engines_freed_on_js_thread.load(std::memory_order_relaxed));
}

// Engines and inference states alive now: a test's proof that disposing frees them all.
Napi::Value live_objects(const Napi::CallbackInfo& info) {
  Napi::Object out = Napi::Object::New(info.Env());
  out.Set("engines", Napi::Number::New(info.Env(), g_live_engines.load(std::memory_order_relaxed)));
  out.Set("states", Napi::Number::New(info.Env(), g_live_states.load(std::memory_order_relaxed)));
  return out;
}

}  // namespace

Napi::Object init(Napi::Env env, Napi::Object exports) {
  static std::once_flag log_once;
  std::call_once(log_once, install_log_bridge);
  t_is_js_thread = true;

  auto* data = new AddonData();
  Napi::Function model = define_model(env);
  data->model_constructor = Napi::Persistent(model);
  env.SetInstanceData<AddonData>(data);  // deleted by N-API when this environment goes away

  exports.Set("Model", model);
  exports.Set("JobControl", define_job_control(env));
  exports.Set("Resampler", define_resampler(env));
  exports.Set("VadStream", define_vad_stream(env));
  exports.Set("setErrorClasses", Napi::Function::New(env, set_error_classes, "setErrorClasses"));
  exports.Set("loadModel", Napi::Function::New(env, load_model, "loadModel"));
  exports.Set("decodeWav", Napi::Function::New(env, decode_wav, "decodeWav"));
  exports.Set("decodeAudio", Napi::Function::New(env, decode_audio, "decodeAudio"));
  exports.Set("setLogHandler", Napi::Function::New(env, set_log_handler, "setLogHandler"));
  exports.Set("systemInfo", Napi::Function::New(env, system_info, "systemInfo"));
  exports.Set("whisperVersion", Napi::String::New(env, whisper_version()));
  exports.Set("whisperPatches", Napi::String::New(env, stt_whisper_patches()));
  exports.Set("enginesFreedOnJsThread", Napi::Function::New(env, engines_freed_on_js_thread, "enginesFreedOnJsThread"));
  exports.Set("liveObjects", Napi::Function::New(env, live_objects, "liveObjects"));
  exports.Set("graphHooks", Napi::Boolean::New(env, graph_hooks_linked()));
  return exports;
}

}  // namespace stt

static Napi::Object Init(Napi::Env env, Napi::Object exports) { return stt::init(env, exports); }

NODE_API_MODULE(stt_native, Init)
