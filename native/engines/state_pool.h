// A pool of inference states for one loaded model. Creating a state allocates
// the large compute buffers, so states are created on demand and reused.
#pragma once
#include <atomic>
#include <cstddef>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace stt {

// Inference states alive in this process, for the leak test (see g_live_engines).
inline std::atomic<int> g_live_states{0};

template <typename State>
class StatePool {
 public:
  using Create = std::function<State*()>;
  using Destroy = std::function<void(State*)>;

  StatePool(Create create, Destroy destroy) : create_(std::move(create)), destroy_(std::move(destroy)) {}
  ~StatePool() {
    for (State* s : idle_) {
      destroy_(s);
      g_live_states.fetch_sub(1, std::memory_order_relaxed);
    }
  }
  StatePool(const StatePool&) = delete;
  StatePool& operator=(const StatePool&) = delete;

  // Hands a state back to the pool when it goes out of scope.
  class Lease {
   public:
    Lease(StatePool& pool, State* state) : pool_(pool), state_(state) {}
    ~Lease() { pool_.release(state_); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    State* get() const { return state_; }

   private:
    StatePool& pool_;
    State* state_;
  };

  State* acquire() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!idle_.empty()) {
        State* s = idle_.back();
        idle_.pop_back();
        return s;
      }
    }
    State* s = create_();
    if (!s) throw std::runtime_error("failed to allocate an inference state");
    g_live_states.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mutex_);
    ++created_;
    return s;
  }

  size_t created() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return created_;
  }
  size_t idle() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return idle_.size();
  }

 private:
  void release(State* s) {
    std::lock_guard<std::mutex> lock(mutex_);
    idle_.push_back(s);
  }

  Create create_;
  Destroy destroy_;
  mutable std::mutex mutex_;
  std::vector<State*> idle_;
  size_t created_ = 0;
};

}  // namespace stt
