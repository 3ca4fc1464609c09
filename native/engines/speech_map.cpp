#include "speech_map.h"

#include <whisper.h>

#include <algorithm>
#include <cfloat>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace stt {
namespace {

constexpr int kSampleRate = 16000;
int cs_to_samples(double cs) { return static_cast<int>((cs / 100.0) * kSampleRate + 0.5); }
int64_t samples_to_cs(int samples) { return static_cast<int64_t>((samples / static_cast<double>(kSampleRate)) * 100.0 + 0.5); }

}  // namespace

SpeechMap::SpeechMap(const VadOptions& vad, const float* pcm, int n_samples, bool spans_only) {
  whisper_vad_context_params cp = whisper_vad_default_context_params();
  // Silero runs one small graph per 32-ms frame (3,750 a minute): more threads
  // only add a barrier per graph, where a thread the OS has descheduled keeps
  // the others spinning (whisper-cli's default of 4 took minutes on 2 busy cores).
  cp.n_threads = 1;
  cp.use_gpu = false;
  // A context per job: Silero keeps its LSTM state in it, and loading the
  // 0.9-MB model costs little beside a transcription.
  std::unique_ptr<whisper_vad_context, void (*)(whisper_vad_context*)> ctx(
      whisper_vad_init_from_file_with_params(vad.model_path.c_str(), cp), whisper_vad_free);
  if (!ctx) throw std::runtime_error("whisper.cpp could not load the VAD model file");

  whisper_vad_params p = whisper_vad_default_params();
  p.threshold = vad.threshold;
  p.min_speech_duration_ms = vad.min_speech_ms;
  p.min_silence_duration_ms = vad.min_silence_ms;
  p.speech_pad_ms = vad.speech_pad_ms;
  std::unique_ptr<whisper_vad_segments, void (*)(whisper_vad_segments*)> found(
      whisper_vad_segments_from_samples(ctx.get(), p, pcm, n_samples), whisper_vad_free_segments);
  if (!found) throw std::runtime_error("voice activity detection failed");

  const int n = whisper_vad_segments_n_segments(found.get());
  const int overlap = static_cast<int>(p.samples_overlap * kSampleRate);
  const int silence = static_cast<int>(0.1 * kSampleRate);
  for (int i = 0; i < n; ++i) {
    const bool last = i == n - 1;
    const float orig_start = whisper_vad_segments_get_segment_t0(found.get(), i);
    const float orig_end = whisper_vad_segments_get_segment_t1(found.get(), i);
    spans_.emplace_back(static_cast<int64_t>(orig_start), static_cast<int64_t>(orig_end));
    if (spans_only) continue;
    const int start = std::min(cs_to_samples(orig_start), n_samples - 1);
    const int end = std::min(cs_to_samples(orig_end), n_samples - 1);
    const int copy_end = last ? end : std::min(end + overlap, n_samples - 1);
    if (copy_end - start <= 0) continue;
    const int offset = static_cast<int>(samples_.size());
    table_.emplace_back(samples_to_cs(offset), static_cast<int64_t>(orig_start));
    table_.emplace_back(samples_to_cs(offset + (end - start)), static_cast<int64_t>(orig_end));
    samples_.insert(samples_.end(), pcm + start, pcm + copy_end);
    if (!last) {
      // 0.1 s of zeros between pieces of speech; its ends map to the silence it replaces.
      const int gap = static_cast<int>(samples_.size());
      const auto resumes = static_cast<int64_t>(whisper_vad_segments_get_segment_t0(found.get(), i + 1));
      table_.emplace_back(samples_to_cs(gap), static_cast<int64_t>(orig_end));
      table_.emplace_back(samples_to_cs(gap + silence), resumes);
      gaps_.push_back({samples_to_cs(gap), samples_to_cs(gap + silence), static_cast<int64_t>(orig_end), resumes});
      samples_.insert(samples_.end(), silence, 0.0f);
    }
  }
  std::stable_sort(table_.begin(), table_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  table_.erase(std::unique(table_.begin(), table_.end(), [](const auto& a, const auto& b) { return a.first == b.first; }), table_.end());
}

int64_t SpeechMap::to_original(int64_t cs, Edge edge) const {
  for (const Gap& g : gaps_) {
    if (cs > g.joined_start && cs < g.joined_end) return edge == Edge::start ? g.speech_resumes : g.speech_ends;
  }
  if (table_.empty()) return cs;
  if (cs <= table_.front().first) return table_.front().second;
  if (cs >= table_.back().first) return table_.back().second;
  auto upper = std::lower_bound(table_.begin(), table_.end(), cs, [](const auto& e, int64_t t) { return e.first < t; });
  if (upper->first == cs) return upper->second;
  auto lower = upper - 1;
  const int64_t span = upper->first - lower->first;
  if (span == 0) return lower->second;
  return lower->second + ((cs - lower->first) * (upper->second - lower->second)) / span;
}

}  // namespace stt
