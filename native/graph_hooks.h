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
#include "job_control.h"

namespace stt {

// True when the hooks are linked in.
bool graph_hooks_linked();

// Makes `job` the current thread's job for the scope's lifetime.
class CurrentJob {
 public:
  explicit CurrentJob(const JobHandle& job);
  ~CurrentJob();
  CurrentJob(const CurrentJob&) = delete;
  CurrentJob& operator=(const CurrentJob&) = delete;
};

}  // namespace stt
