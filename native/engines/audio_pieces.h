// Cuts audio too long for one pass into pieces, at pauses where there are
// any. Parakeet's encoder attends over the whole clip: past the model's own
// context (n_audio_ctx mel frames, 50 s for parakeet-tdt-0.6b-v3) parakeet.cpp
// builds a graph whose attention grows with the square of the length, so
// time and memory blow up on long audio (benchmarks/studies/long-audio.ts).
#pragma once
#include <cstddef>
#include <vector>

namespace stt {

struct AudioPiece {
  size_t start = 0, end = 0;  // the samples transcribed, [start, end)
  // Words are kept from this piece when they start in [keep_from, keep_to):
  // pieces cut at a pause meet there; pieces cut in speech overlap and each
  // keeps its half of the overlap, so no word is said twice. What only this
  // piece heard, [alone_from, alone_to), is kept whatever word it belongs to,
  // so no token is lost when a word runs on past the overlap (or a model
  // marks no word starts at all).
  size_t keep_from = 0, keep_to = 0;
  size_t alone_from = 0, alone_to = 0;
};

// One piece when the audio fits in max_samples. Otherwise each cut falls in
// the quietest 0.2 s of the last 15 s before the limit when that stretch is
// a pause (well below the speech around it, or the zeros VAD puts between
// stretches of speech); in unbroken sound, the pieces overlap by 2 s instead.
std::vector<AudioPiece> plan_pieces(const float* pcm, size_t n_samples, size_t max_samples);

}  // namespace stt
