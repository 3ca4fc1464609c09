// Voice activity detection for both families: Silero (whisper.cpp's VAD)
// finds the speech, the speech is joined the way whisper.cpp's own VAD path
// joins it, and times in the joined audio map back to the original audio.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "job_control.h"

namespace stt {

struct VadOptions {
  std::string model_path;  // empty: no VAD
  float threshold = 0.5f;  // whisper.cpp's defaults (whisper_vad_default_params)
  int min_speech_ms = 250;
  int min_silence_ms = 100;
  int speech_pad_ms = 30;
};

// Speech only, joined. whisper_full() does the same when its params ask for
// VAD, but only for the context's built-in state; the engines run pooled
// states through whisper_full_with_state(), which skips VAD, so the joining
// and the time mapping are done here, the same way (whisper.cpp's whisper_vad
// and map_processed_to_original_time), so that output equals whisper-cli --vad.
class SpeechMap {
 public:
  // Runs Silero over the audio. Throws if the VAD model cannot be loaded or run.
  // `spans_only`: only where the speech is (the speech gate), no joined copy of it.
  SpeechMap(const VadOptions& vad, const float* pcm, int n_samples, bool spans_only = false);

  const std::vector<float>& samples() const { return samples_; }
  // Where Silero heard speech, in the original audio, in centiseconds (padded as asked).
  const std::vector<std::pair<int64_t, int64_t>>& spans() const { return spans_; }
  // Whether [t0, t1] (centiseconds of the original audio) holds at least
  // `min_cs` of speech, or lies wholly in speech when shorter than that; each
  // span widened by `slack_cs` on both sides (Whisper's segment edges are often
  // 0.1-0.3 s off). A segment of no length counts when its instant is in speech.
  bool heard(int64_t t0, int64_t t1, int64_t min_cs, int64_t slack_cs) const {
    int64_t overlap = 0;
    for (const auto& [s, e] : spans_) {
      if (t1 <= t0 && s - slack_cs <= t0 && t0 <= e + slack_cs) return true;
      overlap += std::max<int64_t>(0, std::min(t1, e + slack_cs) - std::max(t0, s - slack_cs));
    }
    return t1 > t0 && overlap >= std::min(min_cs, t1 - t0);
  }
  // Whether a time is where something begins or where it ends.
  enum class Edge { start, end };
  // A time in the joined audio, in centiseconds (whisper.cpp's and parakeet.cpp's
  // unit), as a time in the original. whisper.cpp interpolates across the 0.1 s
  // of zeros that stand for a gap, so a segment that begins in them would begin
  // in the middle of a minute of silence; here it begins where the next speech
  // does, and one that ends in them ends where the speech before them ended.
  int64_t to_original(int64_t cs, Edge edge) const;

 private:
  struct Gap {
    int64_t joined_start, joined_end;      // the zeros
    int64_t speech_ends, speech_resumes;   // the silence they stand for
  };
  std::vector<float> samples_;
  std::vector<std::pair<int64_t, int64_t>> table_;  // (joined, original), sorted by joined time
  std::vector<Gap> gaps_;
  std::vector<std::pair<int64_t, int64_t>> spans_;
};

// A time as sent: through the map when VAD ran, as it is when not.
inline int64_t original_time(const SpeechMap* speech, int64_t cs, SpeechMap::Edge edge) {
  return speech ? speech->to_original(cs, edge) : cs;
}

// A token's start and end as sent. A token wholly inside the zeros that stand
// for a gap would end before it starts; it ends where it starts instead.
inline std::pair<int64_t, int64_t> original_span(const SpeechMap* speech, int64_t t0, int64_t t1) {
  const int64_t start = original_time(speech, t0, SpeechMap::Edge::start);
  return {start, std::max(original_time(speech, t1, SpeechMap::Edge::end), start)};
}

}  // namespace stt
