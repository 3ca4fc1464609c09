// What a running job polls: an abort flag, and a pause gate the scheduler
// uses to let a shorter job take the CPU. Jobs only wait at safe points
// between ggml graph computations (before an encoder window, before each
// decoded token), never inside one: ggml's worker threads spin at barriers,
// so blocking mid-graph would keep burning the cores. Pausing never changes a
// result; it only moves when the remaining work happens.
#pragma once
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>

namespace stt {

class JobControl {
 public:
  void abort() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      aborted_.store(true);
    }
    changed_.notify_all();
  }

  void pause() { paused_.store(true); }

  void resume() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      paused_.store(false);
    }
    changed_.notify_all();
  }

  bool aborted() const { return aborted_.load(); }

  // At a safe point: waits while paused. Returns false when the job should stop.
  bool checkpoint() {
    if (!paused_.load()) return !aborted_.load();
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return !paused_.load() || aborted_.load(); });
    return !aborted_.load();
  }

 private:
  std::atomic<bool> aborted_{false};
  std::atomic<bool> paused_{false};
  std::mutex mutex_;
  std::condition_variable changed_;
};

using JobHandle = std::shared_ptr<JobControl>;

// Adapters for whisper.cpp's and parakeet.cpp's C callbacks, which get the
// control as user data. Inside ggml graphs only read the flag, never wait.
inline bool job_aborted(void* control) { return static_cast<JobControl*>(control)->aborted(); }
// At safe points between graphs, where a paused job waits.
inline bool job_checkpoint(void* control) { return static_cast<JobControl*>(control)->checkpoint(); }

}  // namespace stt
