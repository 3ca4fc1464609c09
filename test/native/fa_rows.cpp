// Checks the fa-rows patch (cmake/whisper-patches.cmake): ggml's flash
// attention for the decoder's few query rows (one per beam) over the
// cross-attention's keys, on the patched path.
// Shapes: 64-dimension heads, 8 heads (so that a thread's chunk of rows can
// span two heads), f16 keys and values, 1,500 keys (the encoder's output: not
// a multiple of the path's 16-key blocks) and 37; 2 to 13 f32 query rows,
// rounded to f16 as both paths do. The path's key blocks are 16 (AVX-512) or
// 8 (AVX2). Each result must match a
// double-precision attention within 1e-5 (the patched path: about 2e-6; the
// one-row path, with its f16 accumulator: about 4e-3), and each row must be
// the same bits whichever rows are computed beside it (the beams of one step
// are) and however its tensors are laid out (whisper.cpp's: the queries
// permuted, the keys and values views of one cache with all heads in a row).
// A ggml built without AVX-512 and without AVX2, FMA and F16C has no such
// path: the check says it skipped.
// Exit 0 when all hold.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "ggml-cpu.h"
#include "ggml.h"
#include "ggml_compute.h"

namespace {

constexpr int kDim = 64;
constexpr int kHeads = 8;
constexpr int kMaxRows = 13;
constexpr float kScale = 0.125f;  // 1/sqrt(64), as whisper.cpp scales

struct Case {
    int keys;
    std::vector<float> queries;  // kDim x kMaxRows x kHeads, f16 values
    std::vector<ggml_fp16_t> k16, v16;
    std::vector<float> k32, v32;  // the same values as f32
};

Case make_case(int keys, std::mt19937 & random) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    Case c;
    c.keys = keys;
    c.queries.resize(static_cast<size_t>(kDim) * kMaxRows * kHeads);
    // Queries of size 2 give sharp softmaxes, as trained attention has.
    for (float & x : c.queries) x = ggml_fp16_to_fp32(ggml_fp32_to_fp16(2.0f * normal(random)));
    const size_t n = static_cast<size_t>(kDim) * keys * kHeads;
    c.k16.resize(n);
    c.v16.resize(n);
    c.k32.resize(n);
    c.v32.resize(n);
    for (size_t i = 0; i < n; ++i) {
        c.k16[i] = ggml_fp32_to_fp16(normal(random));
        c.v16[i] = ggml_fp32_to_fp16(normal(random));
        c.k32[i] = ggml_fp16_to_fp32(c.k16[i]);
        c.v32[i] = ggml_fp16_to_fp32(c.v16[i]);
    }
    return c;
}

// Rows [first, first + n) of the case's queries through ggml_flash_attn_ext;
// the output as [row][head][dim].
std::vector<float> attend(const Case & c, int first, int n, int threads) {
    ggml_init_params params = {256 * 1024 * 1024, nullptr, false};
    ggml_context * ctx = ggml_init(params);
    ggml_tensor * q = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, kDim, n, kHeads);
    ggml_tensor * k = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, kDim, c.keys, kHeads);
    ggml_tensor * v = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, kDim, c.keys, kHeads);
    for (int h = 0; h < kHeads; ++h)
        for (int i = 0; i < n; ++i)
            std::memcpy(static_cast<float *>(q->data) + (static_cast<size_t>(h) * n + i) * kDim,
                        &c.queries[(static_cast<size_t>(h) * kMaxRows + first + i) * kDim], sizeof(float) * kDim);
    std::memcpy(k->data, c.k16.data(), sizeof(ggml_fp16_t) * c.k16.size());
    std::memcpy(v->data, c.v16.data(), sizeof(ggml_fp16_t) * c.v16.size());
    return compute_and_free(ctx, ggml_flash_attn_ext(ctx, q, k, v, nullptr, kScale, 0.0f, 0.0f), threads);
}

// The same rows laid out as whisper.cpp's decoder lays them out: the queries a
// permuted [dim, head, row] tensor, the keys and values views of a
// [dim x heads, key] cache.
std::vector<float> attend_as_whisper(const Case & c, int first, int n, int threads) {
    ggml_init_params params = {256 * 1024 * 1024, nullptr, false};
    ggml_context * ctx = ggml_init(params);
    ggml_tensor * q0 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, kDim, kHeads, n);
    for (int h = 0; h < kHeads; ++h)
        for (int i = 0; i < n; ++i)
            std::memcpy(static_cast<float *>(q0->data) + (static_cast<size_t>(i) * kHeads + h) * kDim,
                        &c.queries[(static_cast<size_t>(h) * kMaxRows + first + i) * kDim], sizeof(float) * kDim);
    ggml_tensor * q = ggml_permute(ctx, q0, 0, 2, 1, 3);
    ggml_tensor * kc = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, kDim * kHeads, c.keys);
    ggml_tensor * vc = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, kDim * kHeads, c.keys);
    for (int h = 0; h < kHeads; ++h)
        for (int j = 0; j < c.keys; ++j) {
            const size_t from = (static_cast<size_t>(h) * c.keys + j) * kDim, to = (static_cast<size_t>(j) * kHeads + h) * kDim;
            std::memcpy(static_cast<ggml_fp16_t *>(kc->data) + to, &c.k16[from], sizeof(ggml_fp16_t) * kDim);
            std::memcpy(static_cast<ggml_fp16_t *>(vc->data) + to, &c.v16[from], sizeof(ggml_fp16_t) * kDim);
        }
    ggml_tensor * k = ggml_view_3d(ctx, kc, kDim, c.keys, kHeads, kc->nb[1], sizeof(ggml_fp16_t) * kDim, 0);
    ggml_tensor * v = ggml_view_3d(ctx, vc, kDim, c.keys, kHeads, vc->nb[1], sizeof(ggml_fp16_t) * kDim, 0);
    return compute_and_free(ctx, ggml_flash_attn_ext(ctx, q, k, v, nullptr, kScale, 0.0f, 0.0f), threads);
}

// The largest difference between `out` (rows [first, first + n)) and a
// double-precision softmax attention.
double worst_error(const Case & c, const std::vector<float> & out, int first, int n) {
    double largest = 0.0;
    std::vector<double> weights(c.keys);
    for (int i = 0; i < n; ++i) {
        for (int h = 0; h < kHeads; ++h) {
            const float * qi = &c.queries[(static_cast<size_t>(h) * kMaxRows + first + i) * kDim];
            double top = -INFINITY, sum = 0.0;
            for (int j = 0; j < c.keys; ++j) {
                double dot = 0.0;
                for (int d = 0; d < kDim; ++d) dot += static_cast<double>(qi[d]) * c.k32[(static_cast<size_t>(h) * c.keys + j) * kDim + d];
                weights[j] = dot * kScale;
                top = std::fmax(top, weights[j]);
            }
            for (double & w : weights) sum += (w = std::exp(w - top));
            for (int d = 0; d < kDim; ++d) {
                double expected = 0.0;
                for (int j = 0; j < c.keys; ++j) expected += weights[j] * c.v32[(static_cast<size_t>(h) * c.keys + j) * kDim + d];
                largest = std::fmax(largest, std::fabs(expected / sum - out[(static_cast<size_t>(i) * kHeads + h) * kDim + d]));
            }
        }
    }
    return largest;
}

}  // namespace

int main(int argc, char ** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
    // ggml_cpu_has_avx512() asks for AVX512F only; the patch's AVX-512 case needs DQ too (a CPU with F
    // and not DQ takes its AVX2 case, and is named wrongly here: no such CPU runs this server).
    if (!ggml_cpu_has_avx512() && !(ggml_cpu_has_avx2() && ggml_cpu_has_fma() && ggml_cpu_has_f16c())) {
        std::printf("fa rows: skipped: this ggml was built without AVX-512 and without AVX2, FMA and F16C, so the one-row path runs\n");
        return 0;
    }
    std::printf("fa rows: the %s path\n", ggml_cpu_has_avx512() ? "AVX-512" : "AVX2");
    std::mt19937 random(20261127);
    constexpr double kTolerance = 1e-5;
    int failures = 0;
    double largest = 0.0;
    for (const int keys : {1500, 37}) {
        const Case c = make_case(keys, random);
        const std::vector<float> all = attend(c, 0, kMaxRows, threads);
        for (const int n : {2, 3, 5, 8, 13}) {
            // rows [first, first + n) alone against the same rows among all 13
            const int first = (kMaxRows - n) / 2;
            const std::vector<float> some = attend(c, first, n, threads);
            if (std::memcmp(some.data(), &all[static_cast<size_t>(first) * kHeads * kDim], sizeof(float) * some.size()) != 0) {
                std::printf("%d keys: rows %d-%d alone differ from the same rows among %d\n", keys, first, first + n - 1, kMaxRows);
                ++failures;
            }
            if (attend_as_whisper(c, first, n, threads) != some) {
                std::printf("%d keys: rows %d-%d laid out as whisper.cpp lays them out differ\n", keys, first, first + n - 1);
                ++failures;
            }
            const double error = worst_error(c, some, first, n);
            largest = std::fmax(largest, error);
            if (error > kTolerance) {
                std::printf("%d keys, %d rows: largest error against the double-precision attention %g\n", keys, n, error);
                ++failures;
            }
        }
    }
    if (failures) std::printf("fa rows: %d mismatches\n", failures);
    else std::printf("fa rows: all equal (largest error %.1e)\n", largest);
    return failures ? 1 : 0;
}
