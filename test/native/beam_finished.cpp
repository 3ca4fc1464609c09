// Checks the beam-finished-hypotheses patch (cmake/whisper-patches.cmake) on a
// real model: whisper_full at temperature 0 with beam 5 calls the logits
// filter once per live beam per step, with that beam's tokens so far, so the
// calls show the beam's width step by step. Upstream, every beam took the
// most likely first token (duplicates were not skipped at the first step) and
// a beam that ended left the beam one narrower for the rest of the window;
// with the patch the first step's beams differ, and after a beam ends the
// next step is beam_size wide again (the step it ends at, the others go on
// without it: its decoder is refilled one step later). On short clips the beams end together
// at the end, so the filter ends one beam early: at its third token it
// leaves that beam only the end-of-text token. Prints what it saw and exits
// 0 when both hold, 1 otherwise.
// Usage: stt-beam-finished MODEL.bin CLIP.wav
#include <cstdio>
#include <fstream>
#include <iterator>
#include <cmath>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include <whisper.h>

#include "resampler.h"
#include "wav_decoder.h"

namespace {

constexpr int kBeams = 5;

constexpr int kEndedAt = 3;  // the tokens a beam holds when the filter ends it

struct Steps {
  std::mutex lock;                 // the filter runs on whisper.cpp's sampling threads
  std::map<size_t, int> width;     // tokens so far -> calls: the live beams at that step
  std::set<whisper_token> first;   // the first step's beams' first tokens
  bool ended = false;              // a beam was ended at kEndedAt
};

void on_logits(whisper_context* ctx, whisper_state*, const whisper_token_data* tokens, int n_tokens, float* logits, void* user) {
  auto& steps = *static_cast<Steps*>(user);
  std::lock_guard<std::mutex> hold(steps.lock);  // one thread here, but whisper.cpp may call from several
  steps.width[static_cast<size_t>(n_tokens)]++;
  if (n_tokens == 1) steps.first.insert(tokens[0].id);
  if (n_tokens == kEndedAt && !steps.ended) {
    steps.ended = true;
    const int eot = whisper_token_eot(ctx);
    for (int i = 0, n = whisper_n_vocab(ctx); i < n; ++i) {
      if (i != eot) logits[i] = -INFINITY;
    }
  }
}

void quiet(ggml_log_level, const char*, void*) {}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s MODEL.bin CLIP.wav\n", argv[0]);
    return 2;
  }
  whisper_log_set(quiet, nullptr);
  std::ifstream file(argv[2], std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const stt::DecodedWav wav = stt::decode_wav(bytes.data(), bytes.size());
  const std::vector<float> pcm = stt::Resampler::resample(wav.mono, wav.info.sample_rate, 16000);
  if (pcm.size() > 30 * 16000) {
    std::printf("beam finished: the clip must fit one 30-s window\n");
    return 2;
  }

  whisper_context_params cp = whisper_context_default_params();
  cp.use_gpu = false;
  cp.flash_attn = true;
  whisper_context* ctx = whisper_init_from_file_with_params(argv[1], cp);
  if (!ctx) return 2;
  whisper_full_params p = whisper_full_default_params(WHISPER_SAMPLING_BEAM_SEARCH);
  p.beam_search.beam_size = kBeams;
  // One thread: the filter sees the beams in decoder order, so the beam it
  // ends is decoder 0's, the best one, whose end-of-text candidate then
  // ranks first and is taken (with two threads, either of the first two).
  p.n_threads = 1;
  p.language = "en";
  p.temperature_inc = 0.0f;  // one pass, at temperature 0
  p.print_progress = false;
  p.print_realtime = false;
  p.print_timestamps = false;
  Steps steps;
  p.logits_filter_callback = on_logits;
  p.logits_filter_callback_user_data = &steps;
  if (whisper_full(ctx, p, pcm.data(), static_cast<int>(pcm.size())) != 0) return 2;

  // The steps in order (the prompt's, with no tokens, is decoder 0's alone):
  // the first below kBeams is where a beam ended; the patch makes a later
  // one kBeams again.
  size_t narrowed = 0, widened = 0;
  for (const auto& [tokens, calls] : steps.width) {
    if (tokens == 0) continue;
    std::printf("beam finished: step %zu: %d beams\n", tokens, calls);
    if (!narrowed && calls < kBeams) narrowed = tokens;
    else if (narrowed && !widened && calls == kBeams) widened = tokens;
  }
  std::printf("beam finished: %zu different first tokens\n", steps.first.size());
  bool ok = true;
  if (steps.first.size() != kBeams) {
    std::printf("beam finished: FAIL: the first step's %d beams must hold %d different tokens\n", kBeams, kBeams);
    ok = false;
  }
  if (!narrowed) {
    std::printf("beam finished: FAIL: no step was narrower than %d: the beam ended at %d tokens did not end\n", kBeams, kEndedAt);
    ok = false;
  } else if (!widened) {
    std::printf("beam finished: FAIL: after a beam ended at step %zu, no step was %d beams wide again\n", narrowed, kBeams);
    ok = false;
  } else {
    std::printf("beam finished: a beam ended at step %zu; step %zu was %d beams wide again\n", narrowed, widened, kBeams);
  }
  whisper_free(ctx);
  std::printf("beam finished: %s\n", ok ? "all hold" : "failed");
  return ok ? 0 : 1;
}
