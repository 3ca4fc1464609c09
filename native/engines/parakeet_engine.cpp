// Parakeet TDT through whisper.cpp's libparakeet: one context without state, a pool of states.
#include <parakeet.h>

#include <algorithm>
#include <memory>

#include "audio_pieces.h"
#include "engine_common.h"
#include "pooled_engine.h"

namespace stt {
namespace {

bool encoder_may_begin(parakeet_context*, parakeet_state*, void* control) { return job_checkpoint(control); }
// After each emitted token. A job aborted while paused stops at the next graph through job_aborted.
void after_token(parakeet_context*, parakeet_state*, const parakeet_token_data*, void* control) {
  job_checkpoint(control);
}

class ParakeetEngine : public PooledEngine<parakeet_context, parakeet_state> {
 public:
  explicit ParakeetEngine(parakeet_context* ctx)
      : PooledEngine(ctx, parakeet_free, parakeet_init_state, parakeet_free_state) {}

  const char* family() const override { return "parakeet"; }

  TranscribeResult transcribe(const float* pcm, size_t n_samples, const TranscribeOptions& o) override {
    Job job(*this, o.control);
    JobControl* control = &job.control();
    parakeet_state* state = job.state();
    TranscribeResult result;
    result.duration = static_cast<double>(n_samples) / PARAKEET_SAMPLE_RATE;
    result.language = o.language;  // Parakeet v3 does not report the language it heard
    const HeardAudio heard = hear(o.vad, pcm, n_samples);
    job.stop_if_aborted();
    if (heard.silent()) {
      result.no_speech = true;
      return result;
    }

    // One pass while the audio fits the model's context (less a second of
    // margin for the mel frames at the edges), pieces beyond it. pieceSeconds
    // overrides the limit (benchmarks/studies/long-audio.ts measures one pass against pieces).
    const size_t max_samples = o.piece_seconds > 0
        ? static_cast<size_t>(std::max(o.piece_seconds, 1.0) * PARAKEET_SAMPLE_RATE)
        : static_cast<size_t>(std::max(parakeet_model_n_audio_ctx(context()) - 100, 100)) * kHop;
    // A resumed job skips the pieces it finished: the plan depends on the audio alone.
    if (o.resume_from.set && (o.resume_from.position < 0 || static_cast<size_t>(o.resume_from.position) > heard.n_samples)) {
      throw std::invalid_argument("the resume point lies outside this audio");
    }
    const std::vector<AudioPiece> pieces = plan_pieces(heard.samples, heard.n_samples, max_samples);
    for (size_t k = 0; k < pieces.size(); ++k) {
      const AudioPiece& piece = pieces[k];
      if (o.resume_from.set && static_cast<int64_t>(piece.start) < o.resume_from.position) continue;
      const size_t first = result.segments.size();
      parakeet_full_params p = parakeet_full_default_params(PARAKEET_SAMPLING_GREEDY);
      p.n_threads = o.threads;
      p.audio_ctx = o.audio_ctx;
      p.abort_callback = job_aborted;
      p.abort_callback_user_data = control;
      p.encoder_begin_callback = encoder_may_begin;
      p.encoder_begin_callback_user_data = control;
      p.new_token_callback = after_token;
      p.new_token_callback_user_data = control;
      const int rc = parakeet_full_with_state(context(), state, p, heard.samples + piece.start,
                                              engine_sample_count(piece.end - piece.start));
      job.stop_if_aborted();
      if (rc != 0) throw std::runtime_error("parakeet inference failed (code " + std::to_string(rc) + ")");
      const int64_t offset = static_cast<int64_t>(piece.start / kHop);
      const int n_segments = parakeet_full_n_segments_from_state(state);
      for (int i = 0; i < n_segments; ++i) {
        Segment seg = piece_segment(state, i, piece, offset, heard.speech.get(), o);
        if (seg.tokens.empty()) continue;
        result.text += seg.text;
        result.segments.push_back(std::move(seg));
        if (o.on_segment) o.on_segment(static_cast<int>(result.segments.size()) - 1, result.segments.back().text);
      }
      if (o.on_checkpoint && k + 1 < pieces.size()) {
        ResumePoint next;
        next.set = true;
        next.position = static_cast<int64_t>(pieces[k + 1].start);
        next.seconds = seconds(original_time(heard.speech.get(), static_cast<int64_t>(pieces[k + 1].start / kHop), SpeechMap::Edge::start));
        next.language = o.language;
        o.on_checkpoint(next, {result.segments.begin() + first, result.segments.end()}, 0);
      }
    }
    return result;
  }

 private:
  static constexpr size_t kHop = PARAKEET_SAMPLE_RATE / 100;  // samples per 10-ms mel frame

  // A segment of one piece: the words that start in the piece's share of the
  // audio, at times in the audio sent. Its text is rebuilt from those tokens.
  Segment piece_segment(parakeet_state* state, int i, const AudioPiece& piece, int64_t offset, const SpeechMap* speech,
                        const TranscribeOptions& o) const {
    Segment seg;
    const int n_tokens = parakeet_full_n_tokens_from_state(state, i);
    double logprob_sum = 0;
    int64_t t0 = -1, t1 = 0;
    bool keeping = false;
    for (int j = 0; j < n_tokens; ++j) {
      const parakeet_token_data td = parakeet_full_get_token_data_from_state(state, i, j);
      // A word is kept or dropped by where it starts; a token only this piece heard is always kept.
      const size_t at = piece.start + static_cast<size_t>(std::max<int64_t>(td.t0, 0)) * kHop;
      if (td.is_word_start || j == 0) keeping = at >= piece.keep_from && at < piece.keep_to;
      if (!keeping && !(at >= piece.alone_from && at < piece.alone_to)) continue;
      if (o.max_tokens > 0 && static_cast<int>(seg.tokens.size()) >= o.max_tokens) break;
      seg.tokens.push_back(td.id);
      logprob_sum += td.plog;
      const auto [start, end] = original_span(speech, offset + td.t0, offset + td.t1);
      if (t0 < 0) t0 = start;
      t1 = std::max(t1, end);
      char text[256];
      parakeet_token_to_text(parakeet_token_to_str(context(), td.id), piece.start == 0 && seg.text.empty(), text, sizeof text);
      seg.text += text;
      if (o.word_timestamps) add_to_words(seg.words, td.is_word_start, text, seconds(start), seconds(end), td.p);
    }
    // A word's text starts after the spaces Parakeet's text puts before it.
    for (Word& w : seg.words) {
      const size_t first = w.text.find_first_not_of(' ');
      w.text.erase(0, first == std::string::npos ? w.text.size() : first);
    }
    seg.start = seconds(std::max<int64_t>(t0, 0));
    seg.end = t1 > 0 ? seconds(t1) : seconds(original_time(speech, offset + parakeet_full_get_segment_t1_from_state(state, i), SpeechMap::Edge::end));
    seg.avg_logprob = mean_logprob(logprob_sum, seg.tokens.size());
    // One greedy pass per piece: no windows, no timestamp tokens, no fallback.
    seg.tokens_with_timestamps = seg.tokens;
    return seg;
  }
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
