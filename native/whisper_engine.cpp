// Whisper through whisper.cpp: one context without state, a pool of states.
#include <whisper.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "engine.h"
#include "state_pool.h"

namespace stt {
namespace {

// What whisper.cpp does not report per segment, seen through its callbacks:
// where each 30-s window's segments begin and how many decoding attempts
// (temperature fallbacks) the window took.
struct Window {
  int first_segment = 0;
  int attempts = 0;
  // The first two tokens of each decoder of the last attempt. whisper.cpp drops
  // a window's opening timestamp from its segments unless it is <|0.00|>, and
  // the window's seek is read from it (t0 = seek + 2 * (that timestamp - <|0.00|>)).
  std::vector<std::pair<whisper_token, whisper_token>> openings;
};
struct JobTrace {
  JobControl* control;
  std::vector<Window> windows;
  std::mutex mutex;  // openings: with best_of > 1, decoders sample on several threads
};

// Once per window, on the decoding thread, before its encoder runs.
bool encoder_may_begin(whisper_context*, whisper_state* state, void* user) {
  JobTrace* trace = static_cast<JobTrace*>(user);
  trace->windows.push_back({whisper_full_n_segments_from_state(state), 0});
  return job_checkpoint(trace->control);
}
// Before each token is sampled; leaves the logits alone. A job aborted while
// paused stops at the next graph through job_aborted. An empty sequence is
// decoder 0's first token of an attempt, sampled once per attempt on the
// decoding thread (the other decoders copy its logits), so it counts attempts;
// later calls may come from several decoder threads and only poll the control.
void before_token(whisper_context*, whisper_state*, const whisper_token_data* tokens, int n_tokens, float*, void* user) {
  JobTrace* trace = static_cast<JobTrace*>(user);
  if ((n_tokens == 0 || n_tokens == 2) && !trace->windows.empty()) {
    std::lock_guard<std::mutex> lock(trace->mutex);
    Window& w = trace->windows.back();
    if (n_tokens == 0) {
      w.attempts++;
      w.openings.clear();
    } else {
      w.openings.emplace_back(tokens[0].id, tokens[1].id);
    }
  }
  job_checkpoint(trace->control);
}

// The window's seek from its first output segment (t0 and its tokens):
// whisper.cpp sets t0 = seek + 2 * (opening timestamp - <|0.00|>), where the
// opening timestamp is the segment's first token when it is <|0.00|>, and
// otherwise the dropped token before the segment's first text token, found
// among the decoders' openings (timestamp tokens have tid == id).
int window_seek(const Window& w, int64_t t0, const whisper_token_data& first, whisper_token beg) {
  if (first.id >= beg) return static_cast<int>(t0 - 2 * (first.tid - beg));
  // With several decoders (a fallback at t > 0) two may open with different
  // timestamps before the same word: only an opening all matches agree on is used.
  whisper_token found = -1;
  for (const auto& [opening, next] : w.openings) {
    if (next != first.id || opening <= beg) continue;
    if (found >= 0 && found != opening) return static_cast<int>(t0);
    found = opening;
  }
  // Not found or ambiguous (several timestamps before the text): the segment's start.
  return static_cast<int>(found >= 0 ? t0 - 2 * (found - beg) : t0);
}

// whisper.cpp's temperature ladder (whisper_full_with_state), built the same way.
std::vector<float> temperature_ladder(const whisper_full_params& p) {
  std::vector<float> ladder;
  if (p.temperature_inc > 0.0f) {
    for (float t = p.temperature; t < 1.0f + 1e-6f; t += p.temperature_inc) ladder.push_back(t);
  } else {
    ladder.push_back(p.temperature);
  }
  return ladder;
}

// whisper.cpp times are in 10 ms units.
double seconds(int64_t t) { return static_cast<double>(t) / 100.0; }

class WhisperEngine : public Engine {
 public:
  explicit WhisperEngine(whisper_context* ctx)
      : ctx_(ctx, whisper_free),
        pool_([ctx] { return whisper_init_state(ctx); }, [](whisper_state* s) { whisper_free_state(s); }) {}

  const char* family() const override { return "whisper"; }

  EngineStats stats() const override { return {pool_.created(), pool_.idle(), running_jobs()}; }

  TranscribeResult transcribe(const float* pcm, size_t n_samples, const TranscribeOptions& o) override {
    JobControl* control = o.control.get();
    JobScope job(*this, o.control);
    if (control->aborted()) throw AbortedError();
    typename StatePool<whisper_state>::Lease lease(pool_, pool_.acquire());
    whisper_state* state = lease.get();

    whisper_full_params p = whisper_full_default_params(WHISPER_SAMPLING_GREEDY);
    p.n_threads = o.threads;
    p.print_progress = false;
    p.print_realtime = false;
    p.print_timestamps = false;
    p.print_special = false;
    p.translate = o.translate;
    p.language = o.language.empty() ? "auto" : o.language.c_str();
    p.initial_prompt = o.prompt.empty() ? nullptr : o.prompt.c_str();
    p.temperature = o.temperature;
    if (!o.temperature_fallback) p.temperature_inc = 0.0f;
    // whisper.cpp's default, kept explicit: a pooled state must never carry one
    // request's text into the next one's prompt (windows within a request still do).
    p.no_context = true;
    p.token_timestamps = o.word_timestamps;
    p.max_tokens = o.max_tokens;
    p.audio_ctx = o.audio_ctx;
    JobTrace trace{control, {}, {}};
    p.abort_callback = job_aborted;
    p.abort_callback_user_data = control;
    p.encoder_begin_callback = encoder_may_begin;
    p.encoder_begin_callback_user_data = &trace;
    p.logits_filter_callback = before_token;
    p.logits_filter_callback_user_data = &trace;

    TranscribeResult result;
    result.duration = static_cast<double>(n_samples) / WHISPER_SAMPLE_RATE;
    std::unique_ptr<SpeechMap> speech;
    if (!o.vad.model_path.empty()) {
      speech = std::make_unique<SpeechMap>(o.vad, pcm, engine_sample_count(n_samples));
      if (control->aborted()) throw AbortedError();
      if (speech->samples().empty()) {
        result.language = o.language;  // nothing to hear, nothing detected
        return result;
      }
    }
    // Times in the audio the model heard, in centiseconds, as times in the audio sent.
    const auto start_at = [&speech](int64_t cs) { return original_time(speech.get(), cs, SpeechMap::Edge::start); };
    const auto end_at = [&speech](int64_t cs) { return original_time(speech.get(), cs, SpeechMap::Edge::end); };
    const float* heard = speech ? speech->samples().data() : pcm;
    const size_t n_heard = speech ? speech->samples().size() : n_samples;

    const int rc = whisper_full_with_state(ctx_.get(), state, p, heard, engine_sample_count(n_heard));
    if (control->aborted()) throw AbortedError();
    if (rc != 0) throw std::runtime_error("whisper inference failed (code " + std::to_string(rc) + ")");

    const int lang_id = whisper_full_lang_id_from_state(state);
    result.language = lang_id >= 0 ? whisper_lang_str(lang_id) : o.language;
    const whisper_token eot = whisper_token_eot(ctx_.get());
    const whisper_token beg = whisper_token_beg(ctx_.get());
    const std::vector<float> ladder = temperature_ladder(p);

    const int n_segments = whisper_full_n_segments_from_state(state);
    size_t window = 0;
    int seek = 0;
    for (int i = 0; i < n_segments; ++i) {
      Segment seg;
      // Without VAD these are the segment's own times; with it, mapped here
      // (whisper.cpp maps only for the built-in state), as whisper.cpp maps them:
      // at least 10 ms long.
      const int64_t t0 = whisper_full_get_segment_t0_from_state(state, i);
      const int64_t t1 = whisper_full_get_segment_t1_from_state(state, i);
      seg.start = seconds(start_at(t0));
      seg.end = seconds(speech ? std::max(end_at(t1), start_at(t0) + 10) : t1);
      seg.text = whisper_full_get_segment_text_from_state(state, i);
      seg.no_speech_prob = whisper_full_get_segment_no_speech_prob_from_state(state, i);
      const int n_tokens = whisper_full_n_tokens_from_state(state, i);
      while (window + 1 < trace.windows.size() && trace.windows[window + 1].first_segment <= i) ++window;
      const bool opens_window = window < trace.windows.size() && trace.windows[window].first_segment == i;
      if (opens_window && n_tokens > 0) {
        seek = window_seek(trace.windows[window], t0, whisper_full_get_token_data_from_state(state, i, 0), beg);
      }
      seg.seek = static_cast<int>(start_at(seek));
      if (window < trace.windows.size() && !ladder.empty()) {
        const int attempts = std::max(1, trace.windows[window].attempts);
        seg.temperature = ladder[std::min<size_t>(attempts, ladder.size()) - 1];
      } else {
        seg.temperature = p.temperature;
      }
      // whisper.cpp keeps a window's first start timestamp in its first segment
      // only; the others' start timestamp is the one their t0 was read from.
      if (n_tokens > 0 && whisper_full_get_token_data_from_state(state, i, 0).id < beg) {
        // Within the window's 1501 timestamp tokens (<|0.00|> to <|30.00|>) whatever seek was found.
        seg.tokens_with_timestamps.push_back(beg + static_cast<int>(std::clamp<int64_t>((t0 - seek) / 2, 0, 1500)));
      }
      double logprob_sum = 0;
      for (int j = 0; j < n_tokens; ++j) {
        const whisper_token_data td = whisper_full_get_token_data_from_state(state, i, j);
        if (td.id < eot || td.id >= beg) seg.tokens_with_timestamps.push_back(td.id);
        if (td.id >= eot) continue;  // timestamps and other special tokens
        seg.tokens.push_back(td.id);
        logprob_sum += td.plog;
        if (!o.word_timestamps) continue;
        const char* piece = whisper_token_to_str(ctx_.get(), td.id);
        const bool starts_word = seg.words.empty() || piece[0] == ' ';
        // A token wholly inside the zeros that stand for a gap would end before it starts.
        const double t0 = seconds(start_at(td.t0)), t1 = std::max(seconds(end_at(td.t1)), t0);
        if (starts_word) seg.words.push_back(Word{t0, t1, piece, td.p});
        else {
          Word& w = seg.words.back();
          w.text += piece;
          w.end = std::max(w.end, t1);
          w.probability = std::min(w.probability, td.p);
        }
      }
      seg.avg_logprob = seg.tokens.empty() ? 0.0f : static_cast<float>(logprob_sum / seg.tokens.size());
      for (Word& w : seg.words) {
        if (!w.text.empty() && w.text[0] == ' ') w.text.erase(0, 1);
      }
      result.text += seg.text;
      result.segments.push_back(std::move(seg));
    }
    return result;
  }

 private:
  std::unique_ptr<whisper_context, void (*)(whisper_context*)> ctx_;
  StatePool<whisper_state> pool_;
};

}  // namespace

std::unique_ptr<Engine> load_whisper_engine(const std::string& path) {
  whisper_context_params cp = whisper_context_default_params();
  cp.use_gpu = false;
  cp.flash_attn = true;  // whisper-cli's default, so parity and benchmarks compare like with like
  whisper_context* ctx = whisper_init_from_file_with_params_no_state(path.c_str(), cp);
  if (!ctx) throw std::runtime_error("whisper.cpp could not load the model file");
  return std::make_unique<WhisperEngine>(ctx);
}

}  // namespace stt
