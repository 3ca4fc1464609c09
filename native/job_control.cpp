// JobControl: a JS handle on what a running job polls (abort flag, pause
// gate). The TypeScript layer wires an AbortSignal and the scheduler to it.
#include "bindings.h"

namespace stt {
namespace {

class JobControlWrap : public Napi::ObjectWrap<JobControlWrap> {
 public:
  explicit JobControlWrap(const Napi::CallbackInfo& info)
      : Napi::ObjectWrap<JobControlWrap>(info), control_(std::make_shared<JobControl>()) {}

  Napi::Value abort(const Napi::CallbackInfo& info) {
    control_->abort();
    return info.Env().Undefined();
  }
  Napi::Value pause(const Napi::CallbackInfo& info) {
    control_->pause();
    return info.Env().Undefined();
  }
  Napi::Value resume(const Napi::CallbackInfo& info) {
    control_->resume();
    return info.Env().Undefined();
  }
  JobHandle handle() const { return control_; }

 private:
  JobHandle control_;
};

}  // namespace

Napi::Function define_job_control(Napi::Env env) {
  return JobControlWrap::DefineClass(env, "JobControl",
                                     {JobControlWrap::InstanceMethod<&JobControlWrap::abort>("abort"),
                                      JobControlWrap::InstanceMethod<&JobControlWrap::pause>("pause"),
                                      JobControlWrap::InstanceMethod<&JobControlWrap::resume>("resume")});
}

JobHandle job_control_of(const Napi::Value& value) {
  if (value.IsObject()) {
    // Unwrap throws for objects that are not JobControls; the TS layer only passes ours.
    return JobControlWrap::Unwrap(value.As<Napi::Object>())->handle();
  }
  return std::make_shared<JobControl>();
}

}  // namespace stt
