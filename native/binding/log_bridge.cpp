// Routes whisper.cpp, parakeet and ggml log lines to a JS callback instead of
// stderr. Lines arrive in pieces from any thread; each thread assembles its
// own line and hands complete lines to a thread-safe function.
#include <whisper.h>
#include <parakeet.h>

#include <mutex>
#include <string>

#include "bindings.h"

namespace stt {
namespace {

struct LogLine {
  int level;
  std::string text;
};

std::mutex sink_mutex;
Napi::ThreadSafeFunction sink;  // empty when no handler is set: lines are dropped
napi_env sink_env = nullptr;

void deliver(Napi::Env env, Napi::Function fn, LogLine* line) {
  if (env != nullptr && fn != nullptr) {
    fn.Call({Napi::Number::New(env, line->level), Napi::String::New(env, line->text)});
  }
  delete line;
}

void on_log(ggml_log_level level, const char* text, void*) {
  thread_local std::string pending;
  thread_local int pending_level = GGML_LOG_LEVEL_INFO;
  if (!text) return;
  if (pending.empty() && level != GGML_LOG_LEVEL_CONT) pending_level = level;
  pending += text;
  if (pending.empty() || pending.back() != '\n') return;
  pending.pop_back();
  std::lock_guard<std::mutex> lock(sink_mutex);
  if (sink) {
    auto* line = new LogLine{pending_level, pending};
    if (sink.NonBlockingCall(line, deliver) != napi_ok) delete line;
  }
  pending.clear();
}

void release_sink() {
  if (sink) sink.Release();
  sink = Napi::ThreadSafeFunction();
  sink_env = nullptr;
}

void cleanup_for_env(napi_env env) {
  std::lock_guard<std::mutex> lock(sink_mutex);
  if (sink_env == env) release_sink();
}

}  // namespace

void install_log_bridge() {
  whisper_log_set(on_log, nullptr);
  parakeet_log_set(on_log, nullptr);
  ggml_log_set(on_log, nullptr);
}

// setLogHandler(fn | null): one handler per process; the last environment to set it wins.
Napi::Value set_log_handler(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::lock_guard<std::mutex> lock(sink_mutex);
  release_sink();
  if (info.Length() > 0 && info[0].IsFunction()) {
    sink = Napi::ThreadSafeFunction::New(env, info[0].As<Napi::Function>(), "stt-log", 0, 1);
    sink.Unref(env);  // logging never keeps the process alive
    sink_env = env;
    napi_env raw = env;
    env.AddCleanupHook([raw] { cleanup_for_env(raw); });
  }
  return env.Undefined();
}

}  // namespace stt
