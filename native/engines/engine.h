// What a loaded model can do, independent of its family. The N-API layer
// converts JS values to these plain structs on the main thread; engines run
// on libuv worker threads and never touch N-API.
#pragma once
#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "graph_hooks.h"
#include "job_control.h"
#include "speech_map.h"

namespace stt {

// whisper.cpp and parakeet.cpp take the sample count as an int: refuse more
// instead of letting the count wrap (the WAV decoder refuses them earlier).
inline int engine_sample_count(size_t n_samples) {
  if (n_samples > 2147483647u) throw std::length_error("more samples than the engines accept (INT32_MAX)");
  return static_cast<int>(n_samples);
}

struct Word {
  double start = 0, end = 0;
  std::string text;
  float probability = 0;
};

struct Segment {
  double start = 0, end = 0;
  std::string text;
  std::vector<int> tokens;  // text tokens only
  // Whisper's own record of the segment: its tokens with the timestamp tokens
  // around the text, the start of its 30-s window in mel frames (100 per
  // second) and the temperature its window was decoded at after any fallback.
  std::vector<int> tokens_with_timestamps;
  int seek = 0;
  float temperature = 0;
  float avg_logprob = 0;
  float no_speech_prob = 0;
  std::vector<Word> words;
  // With token_logprobs: each text token's bytes (a piece of UTF-8, possibly
  // cut inside a character) and its log-probability, in order.
  std::vector<std::string> token_bytes;
  std::vector<float> token_logprobs;
};

// Where a stopped transcription of a long recording resumes, so that the rest
// is decoded as one uninterrupted run would decode it (src/jobs/runner.ts).
// Whisper: the next 30-s window's seek (in 10-ms frames of the audio the
// engine decodes), the tokens its prompt is taken from, the token-timestamp
// clock, the sampling decoders' random-number states and the language the
// run decodes in. Parakeet: the sample its next
// piece starts at (pieces are planned from the audio alone).
struct ResumePoint {
  bool set = false;
  int64_t position = 0;
  std::vector<int> prompt;
  int64_t clock[3] = {0, 0, 0};
  std::vector<std::string> rngs;  // the temperature fallback's decoders' random-number states, as text
  std::string language;
  double seconds = 0;  // how far the run got, in seconds of the audio sent (for progress)
};

struct TranscribeOptions {
  std::string language;  // empty: detect (Whisper)
  bool translate = false;
  std::string prompt;
  float temperature = 0.0f;
  bool temperature_fallback = true;  // whisper.cpp's +0.2 retries on low-confidence windows
  int beam_size = 1;  // Whisper: 1 greedy; more searches that many beams (whisper.cpp's beam search)
  int threads = 1;
  // Whisper: threads for the decoder's graphs; 0 = `threads`. Fewer when another
  // process holds a core (the decoder's many small graphs wait at every barrier).
  int decoder_threads = 0;
  bool word_timestamps = false;
  // Each text token's bytes and log-probability (OpenAI's include[]=logprobs); Whisper only.
  bool token_logprobs = false;
  // With vad.model_path (Whisper): Silero decides whether and where anyone
  // speaks, but the whole audio is decoded as sent; no speech, no decode, and
  // the segments of a 30-s window with (almost) no speech in it are dropped.
  // VAD without the gate cuts the audio to the speech instead.
  bool speech_gate = false;
  int max_tokens = 0;  // per segment; 0 = the model's own limit
  int audio_ctx = 0;   // 0 = the full 30-s window; smaller trades accuracy for speed on short clips
  VadOptions vad;      // a model path: transcribe only the speech Silero finds
  double piece_seconds = 0;  // Parakeet: longest piece transcribed in one pass; 0 = the model's context
  JobHandle control;
  // Streaming: called on the job's thread with each segment's index in the
  // result and its text as soon as that segment is final. Empty: not called.
  std::function<void(int index, const std::string& text)> on_segment;
  // Long recordings: start from this point instead of the beginning ...
  ResumePoint resume_from;
  // ... and call this on the job's thread at every point a later run could
  // resume from, with the segments finished since the previous call and how
  // many the speech gate left out meanwhile. Empty: not called.
  std::function<void(const ResumePoint& point, const std::vector<Segment>& segments, int gated)> on_checkpoint;
};

struct TranscribeResult {
  std::string text;
  std::string language;
  double duration = 0;
  std::vector<Segment> segments;
  // What the guards against text where nobody speaks left out (VAD or the
  // speech gate): the whole audio, when they heard no speech in it (or there
  // were no samples at all), or the segments of the 30-s windows the gate
  // judged silent.
  bool no_speech = false;
  int gated_segments = 0;
};

struct EngineStats {
  size_t states_created = 0;
  size_t states_idle = 0;
  size_t jobs_running = 0;
};

// Thrown when a job stops because its abort flag was set.
class AbortedError : public std::runtime_error {
 public:
  AbortedError() : std::runtime_error("transcription aborted") {}
};

// Freeing an engine (weights, contexts, states) stalls the thread that does
// it for a time that grows with the model, so engines are freed on pool
// threads. init() marks each JS thread; an engine destroyed on one is counted
// so tests can prove none is.
inline thread_local bool t_is_js_thread = false;
inline std::atomic<int> g_engines_freed_on_js_thread{0};
// Engines alive in this process (states: state_pool.h), so a test can show
// that load/dispose cycles free every one (RSS is too coarse to see one state).
inline std::atomic<int> g_live_engines{0};

class Engine {
 public:
  Engine() { g_live_engines.fetch_add(1, std::memory_order_relaxed); }
  virtual ~Engine() {
    g_live_engines.fetch_sub(1, std::memory_order_relaxed);
    if (t_is_js_thread) g_engines_freed_on_js_thread.fetch_add(1, std::memory_order_relaxed);
  }
  virtual const char* family() const = 0;
  virtual TranscribeResult transcribe(const float* pcm, size_t n_samples, const TranscribeOptions& options) = 0;
  virtual EngineStats stats() const = 0;

  // Aborts every job in flight, paused ones included, and every job that
  // starts afterwards (a job queued on the thread pool before dispose() may
  // start later, and a paused one would otherwise wait forever). Used by dispose().
  void abort_all() {
    std::lock_guard<std::mutex> lock(jobs_mutex_);
    closing_ = true;
    for (auto* control : jobs_) control->abort();
  }

 protected:
  // Registers a job's control for abort_all() while the job runs, and makes
  // it the current thread's job for the graph hooks.
  class JobScope {
   public:
    JobScope(Engine& engine, const JobHandle& control) : engine_(engine), control_(control.get()), current_(control) {
      std::lock_guard<std::mutex> lock(engine_.jobs_mutex_);
      if (engine_.closing_) control_->abort();
      engine_.jobs_.insert(control_);
    }
    ~JobScope() {
      std::lock_guard<std::mutex> lock(engine_.jobs_mutex_);
      engine_.jobs_.erase(control_);
    }
    JobScope(const JobScope&) = delete;
    JobScope& operator=(const JobScope&) = delete;

   private:
    Engine& engine_;
    JobControl* control_;
    CurrentJob current_;
  };

  size_t running_jobs() const {
    std::lock_guard<std::mutex> lock(jobs_mutex_);
    return jobs_.size();
  }

 private:
  mutable std::mutex jobs_mutex_;
  std::set<JobControl*> jobs_;
  bool closing_ = false;  // guarded by jobs_mutex_
};

std::unique_ptr<Engine> load_whisper_engine(const std::string& path);
std::unique_ptr<Engine> load_parakeet_engine(const std::string& path);

}  // namespace stt
