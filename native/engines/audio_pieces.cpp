#include "audio_pieces.h"

#include <algorithm>
#include <cstdint>

namespace stt {
namespace {

constexpr size_t kRate = 16000;
constexpr size_t kFrame = kRate / 50;      // 20 ms
constexpr size_t kWindowFrames = 10;       // a pause is looked for as 0.2 s of quiet
constexpr size_t kSearch = 15 * kRate;     // how far before the limit a cut may fall
constexpr size_t kOverlap = 2 * kRate;     // where no pause is found
// A 0.2-s window is a pause when its energy is at most 1 % of the median
// 20-ms frame's over the search range (-20 dB): a breath between words,
// background noise alone, or the zeros VAD joins speech with.
constexpr double kPauseEnergyRatio = 0.01;

double mean_square(const float* x, size_t n) {
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  return sum / static_cast<double>(n);
}

// The start of the quietest window in [from, limit), or limit when none is a pause.
size_t quietest_pause(const float* pcm, size_t from, size_t limit) {
  const size_t frames = (limit - from) / kFrame;
  if (frames < kWindowFrames) return limit;
  std::vector<double> energy(frames);
  for (size_t f = 0; f < frames; ++f) energy[f] = mean_square(pcm + from + f * kFrame, kFrame);
  std::vector<double> sorted = energy;
  std::nth_element(sorted.begin(), sorted.begin() + frames / 2, sorted.end());
  const double median = sorted[frames / 2];

  double window = 0;
  for (size_t f = 0; f < kWindowFrames; ++f) window += energy[f];
  double best = window;
  size_t best_frame = 0;
  for (size_t f = kWindowFrames; f < frames; ++f) {
    window += energy[f] - energy[f - kWindowFrames];
    // Later wins ties: the longer the piece, the fewer the pieces.
    if (window <= best) {
      best = window;
      best_frame = f + 1 - kWindowFrames;
    }
  }
  if (best / kWindowFrames > kPauseEnergyRatio * median) return limit;
  return from + (best_frame + kWindowFrames / 2) * kFrame;
}

}  // namespace

std::vector<AudioPiece> plan_pieces(const float* pcm, size_t n_samples, size_t max_samples) {
  std::vector<AudioPiece> pieces;
  const size_t search = std::min(kSearch, max_samples / 2);
  const size_t overlap = std::min(kOverlap, max_samples / 4);
  size_t start = 0, keep_from = 0, alone_from = 0;
  while (n_samples - start > max_samples) {
    const size_t limit = start + max_samples;
    const size_t cut = quietest_pause(pcm, limit - search, limit);
    if (cut < limit) {
      pieces.push_back({start, cut, keep_from, cut, alone_from, cut});
      start = keep_from = alone_from = cut;
    } else {
      const size_t seam = limit - overlap / 2;
      pieces.push_back({start, limit, keep_from, seam, alone_from, limit - overlap});
      keep_from = seam;
      alone_from = limit;  // the next piece alone hears what follows this one's end
      start = limit - overlap;
    }
  }
  pieces.push_back({start, n_samples, keep_from, SIZE_MAX, alone_from, SIZE_MAX});
  return pieces;
}

}  // namespace stt
