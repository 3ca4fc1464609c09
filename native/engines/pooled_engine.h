// An engine over one loaded context whose jobs run on pooled inference states:
// whisper.cpp and parakeet.cpp both split a model this way (weights in the
// context, compute buffers in each state), so both engines derive from this.
#pragma once
#include <memory>

#include "engine.h"
#include "state_pool.h"

namespace stt {

template <typename Context, typename State>
class PooledEngine : public Engine {
 public:
  EngineStats stats() const override { return {pool_.created(), pool_.idle(), running_jobs()}; }

 protected:
  PooledEngine(Context* ctx, void (*free_context)(Context*), State* (*init_state)(Context*), void (*free_state)(State*))
      : ctx_(ctx, free_context), pool_([ctx, init_state] { return init_state(ctx); }, free_state) {}

  Context* context() const { return ctx_.get(); }

  // What a job holds while it runs: its place among the engine's jobs (for
  // abort_all() and the graph hooks) and one state from the pool. A job
  // aborted before it began stops here, before it takes a state.
  class Job {
   public:
    Job(PooledEngine& engine, const JobHandle& control)
        : scope_(engine, control), control_(*control), lease_(engine.pool_, acquire(engine.pool_)) {}

    State* state() const { return lease_.get(); }
    JobControl& control() const { return control_; }
    // Called after each step that runs for a while without polling the control.
    void stop_if_aborted() const {
      if (control_.aborted()) throw AbortedError();
    }

   private:
    State* acquire(StatePool<State>& pool) const {
      stop_if_aborted();
      return pool.acquire();
    }

    JobScope scope_;  // first in, last out: registered before the check, released after the state
    JobControl& control_;
    typename StatePool<State>::Lease lease_;
  };

 private:
  std::unique_ptr<Context, void (*)(Context*)> ctx_;
  StatePool<State> pool_;
};

}  // namespace stt
