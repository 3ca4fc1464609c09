// AbortFlag: a JS handle on the atomic flag a running job polls through
// whisper.cpp's abort callback. The TypeScript layer wires an AbortSignal to it.
#include "bindings.h"

namespace stt {
namespace {

class AbortFlagWrap : public Napi::ObjectWrap<AbortFlagWrap> {
 public:
  explicit AbortFlagWrap(const Napi::CallbackInfo& info)
      : Napi::ObjectWrap<AbortFlagWrap>(info), flag_(std::make_shared<std::atomic<bool>>(false)) {}

  Napi::Value abort(const Napi::CallbackInfo& info) {
    flag_->store(true);
    return info.Env().Undefined();
  }
  Napi::Value aborted(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), flag_->load()); }

  AbortFlag flag() const { return flag_; }

 private:
  AbortFlag flag_;
};

}  // namespace

Napi::Function define_abort_flag(Napi::Env env) {
  return AbortFlagWrap::DefineClass(env, "AbortFlag",
                                    {AbortFlagWrap::InstanceMethod<&AbortFlagWrap::abort>("abort"),
                                     AbortFlagWrap::InstanceAccessor<&AbortFlagWrap::aborted>("aborted")});
}

AbortFlag abort_flag_of(const Napi::Value& value) {
  if (value.IsObject()) {
    Napi::Object obj = value.As<Napi::Object>();
    // Unwrap throws for objects that are not AbortFlags; the TS layer only passes ours.
    return AbortFlagWrap::Unwrap(obj)->flag();
  }
  return std::make_shared<std::atomic<bool>>(false);
}

}  // namespace stt
