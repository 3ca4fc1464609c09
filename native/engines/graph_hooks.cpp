// The link-time hooks declared in graph_hooks.h, and how a paused job parks
// the threads its current graph runs on (JobControl, job_control.cpp, decides
// when; this file owns the signal and the futex that do it).
//
// ggml's graph threads cannot be told to sleep: between nodes they spin at a
// barrier until thread 0 arrives. While thread 0 waits at the pause gate,
// each of them is sent kParkSignal, whose handler sleeps on the job's worker
// gate (a futex: async-signal-safe) until resume() or abort() opens it. The
// threads are inside ggml's compute loop then (computing their share of a
// node, spinning at the barrier, or waiting for the graph's start signal), so
// they hold no lock that the job running instead needs; the only lock they
// may hold is their own thread pool's, which thread 0 takes only after the
// gate has opened. The signal is blocked while a thread registers with its
// job or leaves it, the only moments it holds the job's mutex.
#include "graph_hooks.h"

namespace stt {
namespace {
thread_local JobHandle t_job;
}  // namespace

CurrentJob::CurrentJob(const JobHandle& job) { t_job = job; }
CurrentJob::~CurrentJob() { t_job.reset(); }

}  // namespace stt

#ifdef STT_GRAPH_HOOKS
#include <ggml-backend.h>
#include <ggml-cpu.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <mutex>

namespace stt {
namespace {

// The gate a graph thread sleeps on when parked. Set before the thread unblocks
// the park signal, so the handler never makes the first (allocating) access to
// this module's thread-local block.
thread_local std::atomic<int>* t_gate = nullptr;

// Unused by Node, V8 and libuv; the handler ignores threads that are not a job's graph threads.
int park_signal() { return SIGRTMIN + 6; }

void futex_wait(std::atomic<int>* word, int expected) {
  syscall(SYS_futex, reinterpret_cast<int*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void futex_wake_all(std::atomic<int>* word) {
  syscall(SYS_futex, reinterpret_cast<int*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

// Async-signal-safe: atomics and the futex system call only.
void on_park_signal(int) {
  const int saved_errno = errno;
  std::atomic<int>* gate = t_gate;
  while (gate && gate->load(std::memory_order_acquire) == 1) futex_wait(gate, 1);
  errno = saved_errno;
}

void install_park_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_handler = on_park_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(park_signal(), &sa, nullptr);
  });
}

void set_park_signal_blocked(bool blocked, sigset_t* previous = nullptr) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, park_signal());
  pthread_sigmask(blocked ? SIG_BLOCK : SIG_UNBLOCK, &set, previous);
}

bool after_node(void*) { return t_job ? t_job->after_node() : false; }

struct ThreadStart {
  void* (*start)(void*);
  void* arg;
  JobHandle job;
};

// Starts with the park signal blocked (inherited from the creating thread).
void* run_registered(void* p) {
  ThreadStart* s = static_cast<ThreadStart*>(p);
  const pid_t tid = gettid();
  t_gate = &s->job->worker_gate();
  s->job->worker_started(tid);
  set_park_signal_blocked(false);  // a park signal sent meanwhile is delivered here
  void* result = s->start(s->arg);
  set_park_signal_blocked(true);
  s->job->worker_ended(tid);
  t_gate = nullptr;
  delete s;
  return result;
}

}  // namespace

bool graph_hooks_linked() { return true; }

bool park_graph_thread(pid_t tid) { return syscall(SYS_tgkill, getpid(), tid, park_signal()) == 0; }

void wake_graph_threads(std::atomic<int>& gate) { futex_wake_all(&gate); }

}  // namespace stt

extern "C" {

ggml_backend_t __real_ggml_backend_init_by_type(enum ggml_backend_dev_type type, const char* params);
int __real_pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg);

__attribute__((visibility("hidden"))) ggml_backend_t __wrap_ggml_backend_init_by_type(enum ggml_backend_dev_type type,
                                                                                      const char* params) {
  ggml_backend_t backend = __real_ggml_backend_init_by_type(type, params);
  if (backend && ggml_backend_is_cpu(backend)) {
    stt::install_park_handler();
    ggml_backend_cpu_set_abort_callback(backend, stt::after_node, nullptr);
  }
  return backend;
}

__attribute__((visibility("hidden"))) int __wrap_pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                                                void* (*start)(void*), void* arg) {
  if (!stt::t_job) return __real_pthread_create(thread, attr, start, arg);
  auto* s = new stt::ThreadStart{start, arg, stt::t_job};
  // Created with the park signal blocked, so it cannot arrive before the thread knows its gate.
  sigset_t previous;
  stt::set_park_signal_blocked(true, &previous);
  const int rc = __real_pthread_create(thread, attr, stt::run_registered, s);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (rc != 0) delete s;
  return rc;
}

}  // extern "C"

#else  // no hooks: jobs pause only at safe points between graphs, where no graph thread runs
namespace stt {
bool graph_hooks_linked() { return false; }
bool park_graph_thread(pid_t) { return false; }
void wake_graph_threads(std::atomic<int>&) {}
}  // namespace stt
#endif
