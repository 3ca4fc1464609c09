// Ties ggml's graph computation to the job running on the current thread, so
// a job can be paused or aborted after any node of a graph, not only between
// graphs (see JobControl). Two link-time hooks (GNU ld --wrap; see
// CMakeLists.txt) do it without touching whisper.cpp:
// - every CPU backend whisper.cpp and parakeet.cpp create gets an abort
//   callback, which ggml's thread 0 (the job's thread) calls after each node;
// - threads created while a job runs on this thread (ggml's per-graph worker
//   threads) are registered with that job, so a pause can demote them.
// Without the hooks (other linkers), jobs still pause at safe points.
#pragma once
#include <sys/types.h>

#include <atomic>

#include "job_control.h"

namespace stt {

// True when the hooks are linked in.
bool graph_hooks_linked();

// Sends one of a job's graph threads the park signal, whose handler sleeps
// while the job's worker gate is 1. False when it was not sent: the thread is
// gone, or the hooks are not linked in (no graph thread is registered then).
bool park_graph_thread(pid_t tid);
// Wakes every graph thread asleep on `gate`, once it has been set to 0.
void wake_graph_threads(std::atomic<int>& gate);

// Makes `job` the current thread's job for the scope's lifetime.
class CurrentJob {
 public:
  explicit CurrentJob(const JobHandle& job);
  ~CurrentJob();
  CurrentJob(const CurrentJob&) = delete;
  CurrentJob& operator=(const CurrentJob&) = delete;
};

}  // namespace stt
