// JobControl's methods (job_control.h). Parking a graph's threads goes
// through the graph hooks (graph_hooks.cpp), which own the park signal.
#include "job_control.h"

#include <algorithm>

#include "graph_hooks.h"

namespace stt {

template <typename Change>
void JobControl::release(Change change) {
  bool gate_was_closed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    change();
    ++releases_;
    gate_was_closed = worker_gate_.exchange(0) == 1;
  }
  changed_.notify_all();
  if (gate_was_closed) wake_graph_threads(worker_gate_);
}

void JobControl::abort() { release([this] { aborted_.store(true); }); }

void JobControl::pause(bool inside_graph) {
  inside_graph_only_.store(inside_graph);
  paused_.store(true);
}

void JobControl::resume() {
  release([this] {
    paused_.store(false);
    inside_graph_only_.store(false);
  });
}

bool JobControl::checkpoint() {
  if (!paused_.load() || inside_graph_only_.load()) return !aborted_.load();
  std::unique_lock<std::mutex> lock(mutex_);
  stats_.waiting = true;
  changed_.wait(lock, [this] { return !paused_.load() || aborted_.load(); });
  stats_.waiting = false;
  return !aborted_.load();
}

bool JobControl::after_node() {
  if (!paused_.load()) return aborted_.load();
  std::unique_lock<std::mutex> lock(mutex_);
  if (inside_graph_only_.load() && workers_.empty()) return aborted_.load();
  stats_.waiting = true;
  // Park and wait again after every release: a pause() that lands after a
  // resume() opened the worker gate but before this thread runs again would
  // otherwise leave the graph's other threads spinning beside the job that
  // runs instead.
  while (paused_.load() && !aborted_.load()) {
    park_workers_locked();
    const uint64_t seen = releases_;
    changed_.wait(lock, [&] { return releases_ != seen; });
  }
  stats_.waiting = false;
  return aborted_.load();
}

void JobControl::park_workers_locked() {
  ++stats_.parked_in_graph;
  worker_gate_.store(1, std::memory_order_release);
  for (pid_t tid : workers_) {
    if (park_graph_thread(tid)) ++stats_.workers_parked;
  }
}

void JobControl::worker_started(pid_t tid) {
  std::lock_guard<std::mutex> lock(mutex_);
  workers_.push_back(tid);
  // Started while its job waits inside a graph: park it as soon as it unblocks the signal.
  if (worker_gate_.load() == 1 && park_graph_thread(tid)) ++stats_.workers_parked;
}

void JobControl::worker_ended(pid_t tid) {
  std::lock_guard<std::mutex> lock(mutex_);
  workers_.erase(std::remove(workers_.begin(), workers_.end(), tid), workers_.end());
}

JobControlStats JobControl::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace stt
