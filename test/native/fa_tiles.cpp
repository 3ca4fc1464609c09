// Checks the fa-wide-tiles patch (cmake/whisper-patches.cmake): ggml's tiled
// flash attention, with its taller query tiles, must give each query row the
// same bits wherever the row sits in a tile, and the right values.
// The encoder's shape: 64-dimension heads, f16 keys and values padded to
// 1,536 positions, 1,500 f32 queries (the tiled path). The same queries are
// run again shifted by 37 rows, so every row lands at another place in its
// tile (and the last tile is filled differently): each row must match bit
// for bit. A double-precision softmax attention checks the values of a
// sample of rows. Exit 0 when all match.
// Usage: stt-fa-tiles [threads]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "ggml-cpu.h"
#include "ggml.h"

namespace {

constexpr int kDim = 64;
constexpr int kHeads = 2;
constexpr int kKeys = 1536;
constexpr int kQueries = 1500;
constexpr int kShift = 37;
constexpr float kScale = 0.125f;  // 1/sqrt(64), as whisper.cpp scales

// queries: kDim x n x kHeads (f32); keys, values: kDim x kKeys x kHeads (f16).
// Returns the output as [query][head][dim].
std::vector<float> attend(const std::vector<float> & queries, int n, const std::vector<ggml_fp16_t> & keys,
                          const std::vector<ggml_fp16_t> & values, int threads) {
    ggml_init_params params = {512 * 1024 * 1024, nullptr, false};
    ggml_context * ctx = ggml_init(params);
    ggml_tensor * q = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, kDim, n, kHeads);
    ggml_tensor * k = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, kDim, kKeys, kHeads);
    ggml_tensor * v = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, kDim, kKeys, kHeads);
    std::memcpy(q->data, queries.data(), sizeof(float) * queries.size());
    std::memcpy(k->data, keys.data(), sizeof(ggml_fp16_t) * keys.size());
    std::memcpy(v->data, values.data(), sizeof(ggml_fp16_t) * values.size());
    ggml_tensor * out = ggml_flash_attn_ext(ctx, q, k, v, nullptr, kScale, 0.0f, 0.0f);
    ggml_cgraph * graph = ggml_new_graph(ctx);
    ggml_build_forward_expand(graph, out);
    if (ggml_graph_compute_with_ctx(ctx, graph, threads) != GGML_STATUS_SUCCESS) {
        std::fprintf(stderr, "ggml_graph_compute_with_ctx failed\n");
        std::exit(2);
    }
    // out: ne0 = kDim, ne1 = kHeads, ne2 = n, contiguous.
    std::vector<float> result(static_cast<const float *>(out->data), static_cast<const float *>(out->data) + kDim * kHeads * n);
    ggml_free(ctx);
    return result;
}

// Rows [first, first + n) of all queries, laid out as kDim x n x kHeads.
std::vector<float> rows(const std::vector<float> & all, int total, int first, int n) {
    std::vector<float> out(static_cast<size_t>(kDim) * n * kHeads);
    for (int h = 0; h < kHeads; ++h)
        for (int i = 0; i < n; ++i)
            std::memcpy(&out[(static_cast<size_t>(h) * n + i) * kDim], &all[(static_cast<size_t>(h) * total + first + i) * kDim], sizeof(float) * kDim);
    return out;
}

}  // namespace

int main(int argc, char ** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
    std::mt19937 random(20261127);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const int total = kQueries + kShift;
    std::vector<float> queries(static_cast<size_t>(kDim) * total * kHeads);
    for (float & x : queries) x = normal(random);
    std::vector<float> keys32(static_cast<size_t>(kDim) * kKeys * kHeads), values32(keys32.size());
    std::vector<ggml_fp16_t> keys(keys32.size()), values(values32.size());
    for (size_t i = 0; i < keys.size(); ++i) {
        keys[i] = ggml_fp32_to_fp16(normal(random));
        values[i] = ggml_fp32_to_fp16(normal(random));
        keys32[i] = ggml_fp16_to_fp32(keys[i]);
        values32[i] = ggml_fp16_to_fp32(values[i]);
    }

    const std::vector<float> first = attend(rows(queries, total, 0, kQueries), kQueries, keys, values, threads);
    const std::vector<float> shifted = attend(rows(queries, total, kShift, kQueries), kQueries, keys, values, threads);
    int failures = 0;
    for (int i = kShift; i < kQueries; ++i) {
        const float * a = &first[static_cast<size_t>(i) * kHeads * kDim];
        const float * b = &shifted[static_cast<size_t>(i - kShift) * kHeads * kDim];
        if (std::memcmp(a, b, sizeof(float) * kHeads * kDim) != 0) {
            if (failures < 5) std::printf("query %d differs when it sits %d rows higher in its tile\n", i, kShift);
            ++failures;
        }
    }

    double worst = 0.0;
    for (int i = 0; i < kQueries; i += 97) {
        for (int h = 0; h < kHeads; ++h) {
            const float * qi = &queries[(static_cast<size_t>(h) * total + i) * kDim];
            std::vector<double> weights(kKeys);
            double top = -INFINITY, sum = 0.0;
            for (int j = 0; j < kKeys; ++j) {
                double s = 0.0;
                for (int d = 0; d < kDim; ++d) s += static_cast<double>(qi[d]) * keys32[(static_cast<size_t>(h) * kKeys + j) * kDim + d];
                weights[j] = s * kScale;
                top = std::fmax(top, weights[j]);
            }
            for (double & w : weights) sum += (w = std::exp(w - top));
            for (int d = 0; d < kDim; ++d) {
                double expected = 0.0;
                for (int j = 0; j < kKeys; ++j) expected += weights[j] * values32[(static_cast<size_t>(h) * kKeys + j) * kDim + d];
                expected /= sum;
                worst = std::fmax(worst, std::fabs(expected - first[(static_cast<size_t>(i) * kHeads + h) * kDim + d]));
            }
        }
    }
    if (worst > 1e-3) {
        std::printf("largest error against the double-precision attention: %g\n", worst);
        ++failures;
    }
    std::printf(failures ? "fa tiles: %d mismatches\n" : "fa tiles: all equal%.0d\n", failures);
    return failures ? 1 : 0;
}
