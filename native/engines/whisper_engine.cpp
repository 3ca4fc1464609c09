// Whisper through whisper.cpp: one context without state, a pool of states.
#include <whisper.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "engine_common.h"
#include "pooled_engine.h"

// The resume-point patch (cmake/whisper-patches.cmake): a run's state at a window's start, and a resumed run's.
void stt_whisper_checkpoint(const whisper_state* state, int& seek, std::vector<whisper_token>& prompt, int64_t clock[3],
                            std::vector<std::string>& rngs);
void stt_whisper_resume(whisper_state* state, const int64_t* clock, const std::vector<std::string>& rngs);
// The decoder-threads patch: the threads whisper_full decodes with on a state (0 = its n_threads).
void stt_whisper_set_decoder_threads(whisper_state* state, int n_threads);

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
  JobControl* control = nullptr;
  const std::function<void(int, const std::string&)>* on_segment = nullptr;
  std::vector<Window> windows;
  std::mutex mutex;  // openings: with best_of > 1, decoders sample on several threads
  // The speech gate (TranscribeOptions::speech_gate): how many segments it
  // kept so far, and the seek of the window being finalised (as collect() has it).
  const SpeechMap* gate = nullptr;
  int kept = 0;
  int seek = 0;
  // Long recordings (TranscribeOptions::on_checkpoint): called at the start
  // of each window after the run's first, when the windows before are final.
  std::function<void(whisper_state*)> at_checkpoint;
};

// Sets a state up to continue a stopped run (resume-point) and, on leaving,
// back to ordinary runs: a pooled state must not carry the mark to the next request.
class ResumeScope {
 public:
  ResumeScope(whisper_state* state, const ResumePoint& from) : state_(state) {
    stt_whisper_resume(state_, from.set ? from.clock : nullptr, from.rngs);
  }
  ~ResumeScope() { stt_whisper_resume(state_, nullptr, {}); }
  ResumeScope(const ResumeScope&) = delete;
  ResumeScope& operator=(const ResumeScope&) = delete;

 private:
  whisper_state* state_;
};

// Where collect() stopped: the next segment, and the window and seek it was in.
struct CollectCursor {
  int next = 0;
  size_t window = 0;
  int seek = 0;
};

// The gate judges a whole 30-s window, not a segment: Whisper's timestamps
// after a long silence can be 10 s early (speech at 71 s stamped 61-66 s), so
// a segment's own times would drop real speech. A window with less than this
// much speech anywhere in its 30 s keeps nothing: what it holds was written
// into silence or noise.
constexpr int64_t kGateMinSpeechCs = 20;
constexpr int64_t kWindowCs = 3000;

// Whether the speech gate keeps the segments of the window starting at `seek` (always, without a gate).
bool gate_keeps(const SpeechMap* gate, int seek) {
  return !gate || gate->heard(seek, seek + kWindowCs, kGateMinSpeechCs, 0);
}

// Once per window, on the decoding thread, before its encoder runs.
bool encoder_may_begin(whisper_context*, whisper_state* state, void* user) {
  JobTrace* trace = static_cast<JobTrace*>(user);
  trace->windows.push_back({whisper_full_n_segments_from_state(state), 0, {}});
  if (trace->at_checkpoint && trace->windows.size() > 1) trace->at_checkpoint(state);
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

// After each window's final decode (after any fallback): its segments are final.
// Numbered as the result will number them: the gate's dropped segments are
// not there. The window's seek is found as collect() finds it.
void segments_final(whisper_context* ctx, whisper_state* state, int n_new, void* user) {
  JobTrace* trace = static_cast<JobTrace*>(user);
  const int n = whisper_full_n_segments_from_state(state);
  for (int i = n - n_new; i < n; ++i) {
    if (trace->gate && !trace->windows.empty() && trace->windows.back().first_segment == i && whisper_full_n_tokens_from_state(state, i) > 0) {
      trace->seek = window_seek(trace->windows.back(), whisper_full_get_segment_t0_from_state(state, i),
                                whisper_full_get_token_data_from_state(state, i, 0), whisper_token_beg(ctx));
    }
    if (gate_keeps(trace->gate, trace->seek)) (*trace->on_segment)(trace->kept++, whisper_full_get_segment_text_from_state(state, i));
  }
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

class WhisperEngine : public PooledEngine<whisper_context, whisper_state> {
 public:
  explicit WhisperEngine(whisper_context* ctx) : PooledEngine(ctx, whisper_free, whisper_init_state, whisper_free_state) {}

  const char* family() const override { return "whisper"; }

  TranscribeResult transcribe(const float* pcm, size_t n_samples, const TranscribeOptions& o) override {
    Job job(*this, o.control);
    TranscribeResult result;
    result.duration = static_cast<double>(n_samples) / WHISPER_SAMPLE_RATE;
    const bool gated = o.speech_gate && !o.vad.model_path.empty();
    std::unique_ptr<SpeechMap> gate;
    if (gated) {
      // A guard, not something the request asked for: if Silero fails, the audio is decoded ungated.
      try {
        gate = std::make_unique<SpeechMap>(o.vad, pcm, engine_sample_count(n_samples), true);
      } catch (const std::exception&) {
        gate.reset();
      }
    }
    const HeardAudio heard = gated ? HeardAudio{nullptr, pcm, n_samples} : hear(o.vad, pcm, n_samples);
    job.stop_if_aborted();
    if (heard.silent() || (gate && gate->spans().empty())) {
      result.language = o.language;  // nothing to hear, nothing detected
      result.no_speech = true;
      return result;
    }
    JobTrace trace;
    trace.control = &job.control();
    trace.on_segment = &o.on_segment;
    trace.gate = gate.get();
    whisper_full_params p = full_params(o, trace);
    const ResumePoint& from = o.resume_from;
    if (from.set) check_resume_point(from, heard.n_samples);
    if (from.set) {
      // The rest of a stopped run, as that run would have decoded it (the resume-point patch).
      p.offset_ms = static_cast<int>(from.position * 10);
      p.initial_prompt = nullptr;  // already among the prompt tokens, if the run still carried it
      p.prompt_tokens = from.prompt.empty() ? nullptr : from.prompt.data();
      p.prompt_n_tokens = static_cast<int>(from.prompt.size());
      if (!from.language.empty()) p.language = from.language.c_str();
    }
    CollectCursor cursor;
    if (o.on_checkpoint) {
      trace.at_checkpoint = [&](whisper_state* state) {
        const size_t first = result.segments.size();
        const int gated = result.gated_segments;
        collect(state, p, trace, heard.speech.get(), o, cursor, result);
        o.on_checkpoint(checkpoint(state, result.language, heard.speech.get()), {result.segments.begin() + first, result.segments.end()},
                        result.gated_segments - gated);
      };
    }
    int rc;
    {
      // The pooled state is a resumed run's for this call only, whatever leaves it.
      const ResumeScope resuming(job.state(), from);
      stt_whisper_set_decoder_threads(job.state(), o.decoder_threads);  // set on every run: the state is pooled
      rc = whisper_full_with_state(context(), job.state(), p, heard.samples, engine_sample_count(heard.n_samples));
    }
    job.stop_if_aborted();
    if (rc != 0) throw std::runtime_error("whisper inference failed (code " + std::to_string(rc) + ")");
    collect(job.state(), p, trace, heard.speech.get(), o, cursor, result);
    return result;
  }

 private:
  // whisper.cpp's parameters for one job: the options, and the callbacks
  // through which the job's control is polled and its windows are traced.
  static whisper_full_params full_params(const TranscribeOptions& o, JobTrace& trace) {
    whisper_full_params p = whisper_full_default_params(o.beam_size > 1 ? WHISPER_SAMPLING_BEAM_SEARCH : WHISPER_SAMPLING_GREEDY);
    if (o.beam_size > 1) p.beam_search.beam_size = o.beam_size;
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
    p.abort_callback = job_aborted;
    p.abort_callback_user_data = trace.control;
    p.encoder_begin_callback = encoder_may_begin;
    p.encoder_begin_callback_user_data = &trace;
    p.logits_filter_callback = before_token;
    p.logits_filter_callback_user_data = &trace;
    if (o.on_segment) {
      p.new_segment_callback = segments_final;
      p.new_segment_callback_user_data = &trace;
    }
    return p;
  }

  // A resume point from another model or another recording (the caller
  // checks where it came from; this keeps whisper.cpp's asserts out of reach).
  void check_resume_point(const ResumePoint& from, size_t n_samples) const {
    const int n_vocab = whisper_n_vocab(context());
    for (const int token : from.prompt) {
      if (token < 0 || token >= n_vocab) throw std::invalid_argument("the resume point's prompt does not fit this model");
    }
    if (from.position < 0 || static_cast<size_t>(from.position) > n_samples / (WHISPER_SAMPLE_RATE / 100) + 1) {
      throw std::invalid_argument("the resume point lies outside this audio");
    }
    if (!from.language.empty() && whisper_lang_id(from.language.c_str()) < 0) throw std::invalid_argument("the resume point's language is unknown");
  }

  // Where a later run resumes from to decode the window about to start as
  // this run will: its seek, the last n_text_ctx/2 tokens (all a prompt
  // takes), the token-timestamp clock, the fallback decoders' random-number
  // states and the language.
  ResumePoint checkpoint(whisper_state* state, const std::string& language, const SpeechMap* speech) const {
    ResumePoint point;
    point.set = true;
    int seek = 0;
    std::vector<whisper_token> prompt;
    stt_whisper_checkpoint(state, seek, prompt, point.clock, point.rngs);
    const int n = static_cast<int>(prompt.size());
    point.position = seek;
    point.seconds = seconds(original_time(speech, seek, SpeechMap::Edge::start));
    const int keep = std::min(n, whisper_n_text_ctx(context()) / 2);
    point.prompt.assign(prompt.end() - keep, prompt.end());
    point.language = language;
    return point;
  }

  // The detected language and the segments of a job from the cursor on (all
  // of them once it has finished), each with the window its callbacks traced
  // (seek, temperature after any fallback).
  void collect(whisper_state* state, const whisper_full_params& p, const JobTrace& trace, const SpeechMap* speech,
               const TranscribeOptions& o, CollectCursor& cursor, TranscribeResult& result) const {
    const int lang_id = whisper_full_lang_id_from_state(state);
    result.language = lang_id >= 0 ? whisper_lang_str(lang_id) : o.language;
    const whisper_token beg = whisper_token_beg(context());
    const std::vector<float> ladder = temperature_ladder(p);

    const int n_segments = whisper_full_n_segments_from_state(state);
    size_t& window = cursor.window;
    int& seek = cursor.seek;
    for (int& i = cursor.next; i < n_segments; ++i) {
      const int64_t t0 = whisper_full_get_segment_t0_from_state(state, i);
      const int n_tokens = whisper_full_n_tokens_from_state(state, i);
      while (window + 1 < trace.windows.size() && trace.windows[window + 1].first_segment <= i) ++window;
      const bool opens_window = window < trace.windows.size() && trace.windows[window].first_segment == i;
      if (opens_window && n_tokens > 0) {
        seek = window_seek(trace.windows[window], t0, whisper_full_get_token_data_from_state(state, i, 0), beg);
      }
      if (!gate_keeps(trace.gate, seek)) {
        ++result.gated_segments;
        continue;
      }
      Segment seg = segment(state, i, seek, speech, o.word_timestamps, o.token_logprobs);
      seg.seek = static_cast<int>(original_time(speech, seek, SpeechMap::Edge::start));
      if (window < trace.windows.size() && !ladder.empty()) {
        const int attempts = std::max(1, trace.windows[window].attempts);
        seg.temperature = ladder[std::min<size_t>(attempts, ladder.size()) - 1];
      } else {
        seg.temperature = p.temperature;
      }
      result.text += seg.text;
      result.segments.push_back(std::move(seg));
    }
  }

  // Segment i's times, text, tokens and words; `seek` is its window's start.
  Segment segment(whisper_state* state, int i, int seek, const SpeechMap* speech, bool word_timestamps, bool token_logprobs) const {
    const whisper_token eot = whisper_token_eot(context());
    const whisper_token beg = whisper_token_beg(context());
    Segment seg;
    // Without VAD these are the segment's own times; with it, mapped here
    // (whisper.cpp maps only for the built-in state), as whisper.cpp maps them:
    // at least 10 ms long.
    const int64_t t0 = whisper_full_get_segment_t0_from_state(state, i);
    const int64_t t1 = whisper_full_get_segment_t1_from_state(state, i);
    const int64_t start = original_time(speech, t0, SpeechMap::Edge::start);
    seg.start = seconds(start);
    seg.end = seconds(speech ? std::max(original_time(speech, t1, SpeechMap::Edge::end), start + 10) : t1);
    seg.text = whisper_full_get_segment_text_from_state(state, i);
    seg.no_speech_prob = whisper_full_get_segment_no_speech_prob_from_state(state, i);
    const int n_tokens = whisper_full_n_tokens_from_state(state, i);
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
      if (token_logprobs) {
        seg.token_bytes.emplace_back(whisper_token_to_str(context(), td.id));
        seg.token_logprobs.push_back(td.plog);
      }
      if (!word_timestamps) continue;
      const char* piece = whisper_token_to_str(context(), td.id);
      const auto [word_start, word_end] = original_span(speech, td.t0, td.t1);
      add_to_words(seg.words, piece[0] == ' ', piece, seconds(word_start), seconds(word_end), td.p);
    }
    seg.avg_logprob = mean_logprob(logprob_sum, seg.tokens.size());
    // A word's text starts after the one space of the token that opened it.
    for (Word& w : seg.words) {
      if (!w.text.empty() && w.text[0] == ' ') w.text.erase(0, 1);
    }
    return seg;
  }
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
