// JobControlWrap: the JS object `JobControl`, a handle on what a running job
// polls (JobControl, job_control.h: abort flag, pause gate). The TypeScript
// layer wires an AbortSignal and the scheduler to it.
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
    control_->pause(info.Length() > 0 && info[0].IsObject() && info[0].As<Napi::Object>().Get("insideGraph").ToBoolean());
    return info.Env().Undefined();
  }
  Napi::Value resume(const Napi::CallbackInfo& info) {
    control_->resume();
    return info.Env().Undefined();
  }
  Napi::Value started(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), control_->started()); }
  Napi::Value stats(const Napi::CallbackInfo& info) {
    const JobControlStats s = control_->stats();
    Napi::Object out = Napi::Object::New(info.Env());
    out.Set("waiting", s.waiting);
    out.Set("parkedInGraph", static_cast<double>(s.parked_in_graph));
    out.Set("workersParked", static_cast<double>(s.workers_parked));
    return out;
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
                                      JobControlWrap::InstanceMethod<&JobControlWrap::resume>("resume"),
                                      JobControlWrap::InstanceMethod<&JobControlWrap::started>("started"),
                                      JobControlWrap::InstanceMethod<&JobControlWrap::stats>("stats")});
}

JobHandle job_control_of(const Napi::Value& value) {
  if (value.IsObject()) {
    // Unwrap throws for objects that are not JobControls; the TS layer only passes ours.
    return JobControlWrap::Unwrap(value.As<Napi::Object>())->handle();
  }
  return std::make_shared<JobControl>();
}

}  // namespace stt
