// Parakeet TDT through whisper.cpp's libparakeet: one context without state, a pool of states.
#include <parakeet.h>

#include <algorithm>
#include <memory>

#include "engine.h"
#include "state_pool.h"

namespace stt {
namespace {

bool encoder_may_begin(parakeet_context*, parakeet_state*, void* control) { return job_checkpoint(control); }
// After each emitted token. A job aborted while paused stops at the next graph through job_aborted.
void after_token(parakeet_context*, parakeet_state*, const parakeet_token_data*, void* control) {
  job_checkpoint(control);
}

// Token times are mel frames of 10 ms.
double seconds(int64_t t) { return static_cast<double>(t) / 100.0; }

class ParakeetEngine : public Engine {
 public:
  explicit ParakeetEngine(parakeet_context* ctx)
      : ctx_(ctx, parakeet_free),
        pool_([ctx] { return parakeet_init_state(ctx); }, [](parakeet_state* s) { parakeet_free_state(s); }) {}

  const char* family() const override { return "parakeet"; }

  EngineStats stats() const override { return {pool_.created(), pool_.idle(), running_jobs()}; }

  TranscribeResult transcribe(const float* pcm, size_t n_samples, const TranscribeOptions& o) override {
    JobControl* control = o.control.get();
    JobScope job(*this, o.control);
    if (control->aborted()) throw AbortedError();
    typename StatePool<parakeet_state>::Lease lease(pool_, pool_.acquire());
    parakeet_state* state = lease.get();

    parakeet_full_params p = parakeet_full_default_params(PARAKEET_SAMPLING_GREEDY);
    p.n_threads = o.threads;
    p.audio_ctx = o.audio_ctx;
    p.abort_callback = job_aborted;
    p.abort_callback_user_data = control;
    p.encoder_begin_callback = encoder_may_begin;
    p.encoder_begin_callback_user_data = control;
    p.new_token_callback = after_token;
    p.new_token_callback_user_data = control;

    const int rc = parakeet_full_with_state(ctx_.get(), state, p, pcm, engine_sample_count(n_samples));
    if (control->aborted()) throw AbortedError();
    if (rc != 0) throw std::runtime_error("parakeet inference failed (code " + std::to_string(rc) + ")");

    TranscribeResult result;
    result.duration = static_cast<double>(n_samples) / PARAKEET_SAMPLE_RATE;
    result.language = o.language;  // Parakeet v3 does not report the language it heard

    const int n_segments = parakeet_full_n_segments_from_state(state);
    for (int i = 0; i < n_segments; ++i) {
      Segment seg;
      seg.text = parakeet_full_get_segment_text_from_state(state, i);
      const int n_tokens = parakeet_full_n_tokens_from_state(state, i);
      double logprob_sum = 0;
      int64_t t0 = -1, t1 = 0;
      for (int j = 0; j < n_tokens; ++j) {
        const parakeet_token_data td = parakeet_full_get_token_data_from_state(state, i, j);
        if (o.max_tokens > 0 && static_cast<int>(seg.tokens.size()) >= o.max_tokens) break;
        seg.tokens.push_back(td.id);
        logprob_sum += td.plog;
        if (t0 < 0) t0 = td.t0;
        t1 = std::max(t1, td.t1);
        char piece[256];
        parakeet_token_to_text(parakeet_token_to_str(ctx_.get(), td.id), seg.words.empty(), piece, sizeof piece);
        if (!o.word_timestamps) continue;
        if (td.is_word_start || seg.words.empty()) seg.words.push_back(Word{seconds(td.t0), seconds(td.t1), piece, td.p});
        else {
          Word& w = seg.words.back();
          w.text += piece;
          w.end = seconds(td.t1);
          w.probability = std::min(w.probability, td.p);
        }
      }
      for (Word& w : seg.words) {
        const size_t first = w.text.find_first_not_of(' ');
        w.text.erase(0, first == std::string::npos ? w.text.size() : first);
      }
      seg.start = seconds(std::max<int64_t>(t0, 0));
      seg.end = t1 > 0 ? seconds(t1) : seconds(parakeet_full_get_segment_t1_from_state(state, i));
      seg.avg_logprob = seg.tokens.empty() ? 0.0f : static_cast<float>(logprob_sum / seg.tokens.size());
      // One pass over the whole clip, greedy: no windows, no timestamp tokens, no fallback.
      seg.tokens_with_timestamps = seg.tokens;
      result.text += seg.text;
      result.segments.push_back(std::move(seg));
    }
    return result;
  }

 private:
  std::unique_ptr<parakeet_context, void (*)(parakeet_context*)> ctx_;
  StatePool<parakeet_state> pool_;
};

}  // namespace

std::unique_ptr<Engine> load_parakeet_engine(const std::string& path) {
  parakeet_context_params cp = parakeet_context_default_params();
  cp.use_gpu = false;
  parakeet_context* ctx = parakeet_init_from_file_with_params_no_state(path.c_str(), cp);
  if (!ctx) throw std::runtime_error("whisper.cpp could not load the Parakeet model file");
  return std::make_unique<ParakeetEngine>(ctx);
}

}  // namespace stt
