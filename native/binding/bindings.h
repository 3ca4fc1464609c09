// Declarations shared by the N-API binding files.
#pragma once
#include <napi.h>

#include <string>

#include "engine.h"

namespace stt {

// The error classes of src/native/addon-errors.ts, in the order setErrorClasses() stores them.
enum class ErrorClass { wav, transcription, model_load };

// Per-environment data (main thread and each worker thread get their own).
struct AddonData {
  Napi::FunctionReference model_constructor;
  Napi::FunctionReference error_classes[3];  // by ErrorClass; empty until setErrorClasses()
};

// new <class>(message, code): what the addon throws and rejects with.
Napi::Error coded_error(Napi::Env env, ErrorClass type, const std::string& message, const std::string& code);
Napi::Value set_error_classes(const Napi::CallbackInfo& info);

Napi::Function define_job_control(Napi::Env env);
Napi::Function define_resampler(Napi::Env env);
Napi::Function define_vad_stream(Napi::Env env);
JobHandle job_control_of(const Napi::Value& value);  // a fresh, never-set control for undefined

Napi::Function define_model(Napi::Env env);
Napi::Value load_model(const Napi::CallbackInfo& info);

Napi::Value decode_wav(const Napi::CallbackInfo& info);
Napi::Value decode_audio(const Napi::CallbackInfo& info);

void install_log_bridge();
Napi::Value set_log_handler(const Napi::CallbackInfo& info);

}  // namespace stt
