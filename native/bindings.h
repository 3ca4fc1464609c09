// Declarations shared by the N-API binding files.
#pragma once
#include <napi.h>

#include "engine.h"

namespace stt {

// Per-environment data (main thread and each worker thread get their own).
struct AddonData {
  Napi::FunctionReference model_constructor;
};

Napi::Function define_job_control(Napi::Env env);
JobHandle job_control_of(const Napi::Value& value);  // a fresh, never-set control for undefined

Napi::Function define_model(Napi::Env env);
Napi::Value load_model(const Napi::CallbackInfo& info);

Napi::Value decode_wav(const Napi::CallbackInfo& info);

void install_log_bridge();
Napi::Value set_log_handler(const Napi::CallbackInfo& info);

}  // namespace stt
