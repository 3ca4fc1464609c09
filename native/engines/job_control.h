// What a running job polls: an abort flag, and a pause gate the scheduler
// uses to let a shorter job take the CPU. Pausing never changes a result; it
// only moves when the remaining work happens.
//
// A job waits at safe points between ggml graphs (before an encoder window,
// before or after a decoded token) and, where the graph hooks are linked in
// (graph_hooks.h), after any node inside a graph: a Parakeet encoder pass or a
// Whisper window is one graph of seconds to minutes. Inside a graph the job's
// own thread (ggml's thread 0) waits here, and the graph's other threads,
// which would spin at ggml's barrier and take CPU from the job that runs
// instead, are parked too (graph_hooks.cpp: a signal whose handler sleeps on
// the gate below). The methods are in job_control.cpp, the JS handle on a
// control in job_control_wrap.cpp.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

namespace stt {

struct JobControlStats {
  bool waiting = false;         // the job's thread waits at the pause gate now
  size_t parked_in_graph = 0;   // pauses taken after a node, inside a graph
  size_t workers_parked = 0;    // graph threads parked for such pauses
};

class JobControl {
 public:
  void abort();

  // inside_graph: a test's pause that waits only after a node of a graph whose
  // other threads exist to park, never at a safe point between graphs, so a
  // test sees parking at once instead of retrying pauses until one lands there.
  void pause(bool inside_graph = false);
  void resume();

  bool aborted() const { return aborted_.load(); }
  // The job's native work began on a pool thread (the scheduler pauses only such jobs).
  void mark_started() { started_.store(true); }
  bool started() const { return started_.load(); }

  // At a safe point: waits while paused. Returns false when the job should stop.
  bool checkpoint();

  // After each node of a graph, on the job's own thread. Returns true to
  // abort the graph.
  bool after_node();

  // A thread the job's thread created (ggml's graph threads) starts or ends.
  // Called with the park signal blocked.
  void worker_started(pid_t tid);
  void worker_ended(pid_t tid);

  // The word a parked worker sleeps on (futex): 1 while workers must wait.
  // Closed only by park_workers_locked() and opened by resume() and abort(), all
  // under mutex_, so a resume or abort that lands between after_node()'s
  // check and the parking cannot leave the gate closed behind it.
  std::atomic<int>& worker_gate() { return worker_gate_; }

  JobControlStats stats() const;

 private:
  // Closes the worker gate and signals the graph threads; mutex_ held.
  void park_workers_locked();

  // Applies resume's or abort's change under mutex_, opening the worker gate
  // in the same step (see worker_gate()), then wakes the job and any parked
  // graph threads.
  template <typename Change>
  void release(Change change);

  std::atomic<bool> aborted_{false};
  std::atomic<bool> paused_{false};
  std::atomic<bool> started_{false};
  std::atomic<bool> inside_graph_only_{false};
  std::atomic<int> worker_gate_{0};
  uint64_t releases_ = 0;            // guarded by mutex_; counts resume() and abort()
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<pid_t> workers_;       // guarded by mutex_
  JobControlStats stats_;            // guarded by mutex_
};

using JobHandle = std::shared_ptr<JobControl>;

// Adapters for whisper.cpp's and parakeet.cpp's C callbacks, which get the
// control as user data. Inside ggml graphs only read the flag, never wait.
inline bool job_aborted(void* control) { return static_cast<JobControl*>(control)->aborted(); }
// At safe points between graphs, where a paused job waits.
inline bool job_checkpoint(void* control) { return static_cast<JobControl*>(control)->checkpoint(); }

}  // namespace stt
