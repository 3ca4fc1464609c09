// Bare C++ harness: the same libwhisper/libparakeet and WAV front end as the
// addon, the same parameters, no Node. Benchmarks divide the addon's time by
// this one's. Prints one JSON line per run.
// Usage: stt-harness <whisper|parakeet> <model> <wav> <threads> <runs> [max_tokens] [audio_ctx]
//        runs = 0: one run per line read from stdin, until EOF (lets a benchmark
//        alternate harness and addon runs one by one with the model loaded)
//        stt-harness matmul <threads> <n>      ggml_mul_mat ceiling (whisper-bench -w 2 style)
#include <ggml-cpu.h>
#include <ggml.h>
#include <whisper.h>
#include <parakeet.h>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "resampler.h"
#include "wav_decoder.h"

namespace {

void quiet(ggml_log_level, const char*, void*) {}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// GFLOP/s of an n x n x n ggml_mul_mat for F16 and Q8_0 weights against F32
// activations, best of a few runs: the machine's ceiling for the encoder's matmuls.
int matmul_ceiling(int threads, int n) {
  for (ggml_type type : {GGML_TYPE_F16, GGML_TYPE_Q8_0}) {
    ggml_init_params ip = {static_cast<size_t>(n) * n * 16 + 64 * 1024 * 1024, nullptr, false};
    ggml_context* ctx = ggml_init(ip);
    ggml_tensor* a = ggml_new_tensor_2d(ctx, type, n, n);
    ggml_tensor* b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n, n);
    std::vector<float> src(static_cast<size_t>(n) * n);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
    ggml_quantize_chunk(type, src.data(), a->data, 0, n, n, nullptr);
    std::copy(src.begin(), src.end(), static_cast<float*>(b->data));
    ggml_tensor* c = ggml_mul_mat(ctx, a, b);
    ggml_cgraph* gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, c);
    double best = 1e30;
    for (int r = 0; r < 5; ++r) {
      const double t0 = now_ms();
      ggml_graph_compute_with_ctx(ctx, gf, threads);
      best = std::min(best, now_ms() - t0);
    }
    std::printf("{\"event\":\"matmul\",\"type\":\"%s\",\"n\":%d,\"gflops\":%.2f}\n", ggml_type_name(type), n,
                2.0 * n * n * n / (best / 1000.0) / 1e9);
    ggml_free(ctx);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 4 && std::string(argv[1]) == "matmul") {
    ggml_log_set(quiet, nullptr);
    return matmul_ceiling(std::stoi(argv[2]), std::stoi(argv[3]));
  }
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s <whisper|parakeet> <model> <wav> <threads> <runs> [max_tokens] [audio_ctx] [temperature_fallback 0|1]\n", argv[0]);
    return 2;
  }
  const std::string family = argv[1];
  const int threads = std::stoi(argv[4]);
  const int runs = std::stoi(argv[5]);
  const int max_tokens = argc > 6 ? std::stoi(argv[6]) : 0;
  const int audio_ctx = argc > 7 ? std::stoi(argv[7]) : 0;
  // whisper.cpp's temperature fallback (+0.2 per retry), as the server's STT_TEMPERATURE_FALLBACK.
  const bool temperature_fallback = argc > 8 && std::string(argv[8]) == "1";
  whisper_log_set(quiet, nullptr);
  parakeet_log_set(quiet, nullptr);
  ggml_log_set(quiet, nullptr);

  std::ifstream file(argv[3], std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  stt::DecodedWav wav = stt::decode_wav(bytes.data(), bytes.size());
  std::vector<float> pcm = stt::Resampler::resample(wav.mono, wav.info.sample_rate, 16000);

  // The next run: a fixed count, or one per stdin line when runs is 0.
  auto another = [runs](int r) {
    if (runs > 0) return r < runs;
    std::string line;
    return static_cast<bool>(std::getline(std::cin, line));
  };
  const double t_load = now_ms();
  if (family == "whisper") {
    whisper_context_params cp = whisper_context_default_params();
    cp.use_gpu = false;
    cp.flash_attn = true;
    // With a default state, so whisper_get_timings() can report encoder and decoder times.
    whisper_context* ctx = whisper_init_from_file_with_params(argv[2], cp);
    if (!ctx) return 1;
    std::printf("{\"event\":\"loaded\",\"ms\":%.3f}\n", now_ms() - t_load);
    std::fflush(stdout);
    for (int r = 0; another(r); ++r) {
      whisper_full_params p = whisper_full_default_params(WHISPER_SAMPLING_GREEDY);
      p.n_threads = threads;
      p.print_progress = false;
      p.print_realtime = false;
      p.print_timestamps = false;
      p.language = "en";
      if (!temperature_fallback) p.temperature_inc = 0.0f;
      p.max_tokens = max_tokens;
      p.audio_ctx = audio_ctx;
      whisper_reset_timings(ctx);
      const double t0 = now_ms();
      if (whisper_full(ctx, p, pcm.data(), static_cast<int>(pcm.size())) != 0) return 1;
      const double total = now_ms() - t0;
      int n_tokens = 0;
      // Text tokens (below end-of-text), as the server and whisper-server return them: the benchmark compares them.
      std::string ids;
      const whisper_token eot = whisper_token_eot(ctx);
      for (int i = 0; i < whisper_full_n_segments(ctx); ++i) {
        n_tokens += whisper_full_n_tokens(ctx, i);
        for (int j = 0; j < whisper_full_n_tokens(ctx, i); ++j) {
          const whisper_token id = whisper_full_get_token_id(ctx, i, j);
          if (id < eot) ids += (ids.empty() ? "" : ",") + std::to_string(id);
        }
      }
      whisper_timings* t = whisper_get_timings(ctx);
      std::printf("{\"event\":\"run\",\"ms\":%.3f,\"tokens\":%d,\"encodeMs\":%.3f,\"decodeMsPerToken\":%.3f,\"ids\":[%s]}\n", total,
                  n_tokens, t->encode_ms, t->decode_ms, ids.c_str());
      std::fflush(stdout);
      delete t;
    }
    whisper_free(ctx);
  } else {
    parakeet_context_params cp = parakeet_context_default_params();
    cp.use_gpu = false;
    // With a default state, so parakeet_get_timings() can report the encoder time.
    parakeet_context* ctx = parakeet_init_from_file_with_params(argv[2], cp);
    if (!ctx) return 1;
    std::printf("{\"event\":\"loaded\",\"ms\":%.3f}\n", now_ms() - t_load);
    std::fflush(stdout);
    for (int r = 0; another(r); ++r) {
      parakeet_full_params p = parakeet_full_default_params(PARAKEET_SAMPLING_GREEDY);
      p.n_threads = threads;
      parakeet_reset_timings(ctx);
      const double t0 = now_ms();
      if (parakeet_full(ctx, p, pcm.data(), static_cast<int>(pcm.size())) != 0) return 1;
      const double total = now_ms() - t0;
      int n_tokens = 0;
      std::string ids;  // every emitted token, as the server returns them: the benchmark compares them
      for (int i = 0; i < parakeet_full_n_segments(ctx); ++i) {
        n_tokens += parakeet_full_n_tokens(ctx, i);
        for (int j = 0; j < parakeet_full_n_tokens(ctx, i); ++j) {
          if (!ids.empty()) ids += ',';
          ids += std::to_string(parakeet_full_get_token_id(ctx, i, j));
        }
      }
      parakeet_timings* t = parakeet_get_timings(ctx);
      // Everything after the encoder (prediction + joint per emitted token, and the mel spectrogram) per token.
      std::printf("{\"event\":\"run\",\"ms\":%.3f,\"tokens\":%d,\"encodeMs\":%.3f,\"decodeMsPerToken\":%.3f,\"ids\":[%s]}\n", total,
                  n_tokens, t->encode_ms, n_tokens ? (total - t->encode_ms) / n_tokens : 0.0, ids.c_str());
      std::fflush(stdout);
      delete t;
    }
    parakeet_free(ctx);
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("{\"event\":\"done\",\"maxRssKb\":%ld}\n", usage.ru_maxrss);
  return 0;
}
