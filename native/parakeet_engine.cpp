// Parakeet TDT through whisper.cpp's libparakeet: one context without state, a pool of states.
#include <parakeet.h>

#include <algorithm>
#include <memory>

#include "audio_pieces.h"
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

    TranscribeResult result;
    result.duration = static_cast<double>(n_samples) / PARAKEET_SAMPLE_RATE;
    result.language = o.language;  // Parakeet v3 does not report the language it heard
    std::unique_ptr<SpeechMap> speech;
    if (!o.vad.model_path.empty()) {
      speech = std::make_unique<SpeechMap>(o.vad, pcm, engine_sample_count(n_samples));
      if (control->aborted()) throw AbortedError();
      if (speech->samples().empty()) return result;
    }
    const float* heard = speech ? speech->samples().data() : pcm;
    const size_t n_heard = speech ? speech->samples().size() : n_samples;

    // One pass while the audio fits the model's context (less a second of
    // margin for the mel frames at the edges), pieces beyond it. pieceSeconds
    // overrides the limit (benchmarks/long-audio.ts measures one pass against pieces).
    const size_t max_samples = o.piece_seconds > 0
        ? static_cast<size_t>(std::max(o.piece_seconds, 1.0) * PARAKEET_SAMPLE_RATE)
        : static_cast<size_t>(std::max(parakeet_model_n_audio_ctx(ctx_.get()) - 100, 100)) * kHop;
    for (const AudioPiece& piece : plan_pieces(heard, n_heard, max_samples)) {
      parakeet_full_params p = parakeet_full_default_params(PARAKEET_SAMPLING_GREEDY);
      p.n_threads = o.threads;
      p.audio_ctx = o.audio_ctx;
      p.abort_callback = job_aborted;
      p.abort_callback_user_data = control;
      p.encoder_begin_callback = encoder_may_begin;
      p.encoder_begin_callback_user_data = control;
      p.new_token_callback = after_token;
      p.new_token_callback_user_data = control;
      const int rc = parakeet_full_with_state(ctx_.get(), state, p, heard + piece.start, engine_sample_count(piece.end - piece.start));
      if (control->aborted()) throw AbortedError();
      if (rc != 0) throw std::runtime_error("parakeet inference failed (code " + std::to_string(rc) + ")");
      const int64_t offset = static_cast<int64_t>(piece.start / kHop);
      const int n_segments = parakeet_full_n_segments_from_state(state);
      for (int i = 0; i < n_segments; ++i) {
        Segment seg = piece_segment(state, i, piece, offset, speech.get(), o);
        if (seg.tokens.empty()) continue;
        result.text += seg.text;
        result.segments.push_back(std::move(seg));
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
      const int64_t start = original_time(speech, offset + td.t0, SpeechMap::Edge::start);
      // A token wholly inside the zeros that stand for a gap would end before it starts.
      const int64_t end = std::max(original_time(speech, offset + td.t1, SpeechMap::Edge::end), start);
      if (t0 < 0) t0 = start;
      t1 = std::max(t1, end);
      char text[256];
      parakeet_token_to_text(parakeet_token_to_str(ctx_.get(), td.id), piece.start == 0 && seg.text.empty(), text, sizeof text);
      seg.text += text;
      if (!o.word_timestamps) continue;
      if (td.is_word_start || seg.words.empty()) seg.words.push_back(Word{seconds(start), seconds(end), text, td.p});
      else {
        Word& w = seg.words.back();
        w.text += text;
        w.end = std::max(w.end, seconds(end));
        w.probability = std::min(w.probability, td.p);
      }
    }
    for (Word& w : seg.words) {
      const size_t first = w.text.find_first_not_of(' ');
      w.text.erase(0, first == std::string::npos ? w.text.size() : first);
    }
    seg.start = seconds(std::max<int64_t>(t0, 0));
    seg.end = t1 > 0 ? seconds(t1) : seconds(original_time(speech, offset + parakeet_full_get_segment_t1_from_state(state, i), SpeechMap::Edge::end));
    seg.avg_logprob = seg.tokens.empty() ? 0.0f : static_cast<float>(logprob_sum / seg.tokens.size());
    // One greedy pass per piece: no windows, no timestamp tokens, no fallback.
    seg.tokens_with_timestamps = seg.tokens;
    return seg;
  }

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
