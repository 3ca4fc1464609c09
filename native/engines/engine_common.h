// What the Whisper and Parakeet engines share between taking audio in and
// handing segments out: the audio a job hears (all of it, or the speech VAD
// finds), times in seconds, and words built from tokens.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "engine.h"
#include "speech_map.h"

namespace stt {

// whisper.cpp's and parakeet.cpp's times are in 10-ms units (Parakeet's are mel frames).
inline double seconds(int64_t t) { return static_cast<double>(t) / 100.0; }

// The audio a job transcribes: with VAD (a model path in the options) the
// speech Silero finds, joined, and `speech` to map its times back to the
// audio sent; without VAD the audio as sent.
struct HeardAudio {
  std::unique_ptr<SpeechMap> speech;  // null without VAD
  const float* samples = nullptr;
  size_t n_samples = 0;

  // Nothing to transcribe: VAD found no speech, or there was no audio at all.
  // Never hand whisper.cpp zero samples: whisper_full_with_state then keeps
  // the state's last spectrogram (n_samples 0 means "the mel is already set")
  // and decodes it, so a pooled state would answer with the audio of the
  // request it served before, another key's perhaps.
  bool silent() const { return n_samples == 0; }
};

// Runs Silero when the options ask for VAD (on this thread, for a while).
inline HeardAudio hear(const VadOptions& vad, const float* pcm, size_t n_samples) {
  if (vad.model_path.empty()) return {nullptr, pcm, n_samples};
  auto speech = std::make_unique<SpeechMap>(vad, pcm, engine_sample_count(n_samples));
  const float* samples = speech->samples().data();
  const size_t n = speech->samples().size();
  return {std::move(speech), samples, n};
}

// Adds a token's text to a segment's words: it opens a word when it starts
// one (or none is open yet), else it joins the open word, which then ends
// where the token ends and is as probable as its least probable token.
inline void add_to_words(std::vector<Word>& words, bool starts_word, const char* text, double start, double end,
                         float probability) {
  if (starts_word || words.empty()) {
    words.push_back(Word{start, end, text, probability});
    return;
  }
  Word& w = words.back();
  w.text += text;
  w.end = std::max(w.end, end);
  w.probability = std::min(w.probability, probability);
}

// A segment's average log-probability over its text tokens (0 without any).
inline float mean_logprob(double sum, size_t n_tokens) {
  return n_tokens == 0 ? 0.0f : static_cast<float>(sum / n_tokens);
}

}  // namespace stt
