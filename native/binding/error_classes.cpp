// The addon's errors are instances of the TypeScript layer's own classes
// (src/native/addon-errors.ts), handed over once per environment at load, as
// better-sqlite3 hands SqliteError to its addon: callers test them with
// instanceof instead of casting plain Errors that carry a `code`.
#include "bindings.h"

namespace stt {

Napi::Error coded_error(Napi::Env env, ErrorClass type, const std::string& message, const std::string& code) {
  Napi::FunctionReference& error_class = env.GetInstanceData<AddonData>()->error_classes[static_cast<int>(type)];
  if (error_class.IsEmpty()) {
    // The addon loaded without src/native: a plain Error with the same message and code.
    Napi::Error e = Napi::Error::New(env, message);
    e.Set("code", code);
    return e;
  }
  return Napi::Error(env, error_class.New({Napi::String::New(env, message), Napi::String::New(env, code)}));
}

// setErrorClasses({WavError, TranscriptionError, ModelLoadError})
Napi::Value set_error_classes(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) throw Napi::TypeError::New(env, "setErrorClasses(classes)");
  const Napi::Object classes = info[0].As<Napi::Object>();
  AddonData* data = env.GetInstanceData<AddonData>();
  const char* names[] = {"WavError", "TranscriptionError", "ModelLoadError"};  // ErrorClass order
  for (int i = 0; i < 3; ++i) {
    const Napi::Value value = classes.Get(names[i]);
    if (!value.IsFunction()) throw Napi::TypeError::New(env, std::string("setErrorClasses: ") + names[i] + " must be a class");
    data->error_classes[i] = Napi::Persistent(value.As<Napi::Function>());
  }
  return env.Undefined();
}

}  // namespace stt
