// Checks the fa-wide-tiles patch (cmake/whisper-patches.cmake): ggml's tiled
// flash attention, with its taller query tiles, must give each query row the
// same bits wherever the row sits in a tile, whatever the number of queries
// (64 or more: tiled), and the right values.
// The encoder's shape: 64-dimension heads, 1,536 f16 keys and values (the
// encoder's padded length; all of them random and visible here), 1,500 f32
// queries. The same queries are run again shifted
// by 37 rows, so every row lands at another place in its tile: each row must
// match bit for bit. The first 100 alone (a decoder pass over a long prompt
// has 64-127 rows) must match the same rows of the 1,500. A double-precision
// softmax attention checks the values of a sample of rows, without and with
// a causal mask (the decoder's), and of the same queries over the first 1,500
// keys alone (the fa-tile-loops patch packs keys 16 at a time: 1,500 leaves
// a last tile of 28, 16 packed so and 12 one at a time; on AVX2 24 and 4). Exit 0 when all
// match.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "ggml-cpu.h"
#include "ggml.h"
#include "ggml_compute.h"

namespace {

constexpr int kDim = 64;
constexpr int kHeads = 2;
constexpr int kKeys = 1536;
constexpr int kQueries = 1500;
constexpr int kShift = 37;
constexpr float kScale = 0.125f;  // 1/sqrt(64), as whisper.cpp scales

// queries: kDim x n x kHeads (f32); keys, values: kDim x kKeys x kHeads (f16).
// Returns the output as [query][head][dim].
// Key j is visible to query i when j <= kKeys - n + i (the decoder's causal
// mask over its cache); mask = false: every key.
bool visible(int i, int j, int n, bool mask) { return !mask || j <= kKeys - n + i; }

std::vector<float> attend(const std::vector<float> & queries, int n, const std::vector<ggml_fp16_t> & keys,
                          const std::vector<ggml_fp16_t> & values, int threads, bool mask = false) {
    const int n_keys = static_cast<int>(keys.size() / (kDim * kHeads));
    ggml_init_params params = {512 * 1024 * 1024, nullptr, false};
    ggml_context * ctx = ggml_init(params);
    ggml_tensor * q = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, kDim, n, kHeads);
    ggml_tensor * k = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, kDim, n_keys, kHeads);
    ggml_tensor * v = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, kDim, n_keys, kHeads);
    std::memcpy(q->data, queries.data(), sizeof(float) * queries.size());
    std::memcpy(k->data, keys.data(), sizeof(ggml_fp16_t) * keys.size());
    std::memcpy(v->data, values.data(), sizeof(ggml_fp16_t) * values.size());
    ggml_tensor * m = nullptr;
    if (mask) {
        m = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, kKeys, n);
        ggml_fp16_t * rows = static_cast<ggml_fp16_t *>(m->data);
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < kKeys; ++j) rows[static_cast<size_t>(i) * kKeys + j] = ggml_fp32_to_fp16(visible(i, j, n, true) ? 0.0f : -INFINITY);
    }
    ggml_tensor * out = ggml_flash_attn_ext(ctx, q, k, v, m, kScale, 0.0f, 0.0f);
    // out: ne0 = kDim, ne1 = kHeads, ne2 = n, contiguous.
    return compute_and_free(ctx, out, threads);
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

    constexpr int kFew = 100;
    const std::vector<float> few = attend(rows(queries, total, 0, kFew), kFew, keys, values, threads);
    if (std::memcmp(few.data(), first.data(), sizeof(float) * kFew * kHeads * kDim) != 0) {
        std::printf("%d queries alone differ from the same rows of %d\n", kFew, kQueries);
        ++failures;
    }

    // The largest difference from a double-precision attention over every
    // 97th row of `out` (n rows of `all` from 0), over the first n_keys keys.
    const auto worst = [&](const std::vector<float> & out, int n, bool mask, int n_keys = kKeys) {
        double largest = 0.0;
        for (int i = 0; i < n; i += 97) {
            for (int h = 0; h < kHeads; ++h) {
                const float * qi = &queries[(static_cast<size_t>(h) * total + i) * kDim];
                std::vector<double> weights(n_keys);
                double top = -INFINITY, sum = 0.0;
                for (int j = 0; j < n_keys; ++j) {
                    double dot = 0.0;
                    for (int d = 0; d < kDim; ++d) dot += static_cast<double>(qi[d]) * keys32[(static_cast<size_t>(h) * kKeys + j) * kDim + d];
                    weights[j] = visible(i, j, n, mask) ? dot * kScale : -INFINITY;
                    top = std::fmax(top, weights[j]);
                }
                for (double & w : weights) sum += (w = std::exp(w - top));
                for (int d = 0; d < kDim; ++d) {
                    double expected = 0.0;
                    for (int j = 0; j < n_keys; ++j) expected += weights[j] * values32[(static_cast<size_t>(h) * kKeys + j) * kDim + d];
                    largest = std::fmax(largest, std::fabs(expected / sum - out[(static_cast<size_t>(i) * kHeads + h) * kDim + d]));
                }
            }
        }
        return largest;
    };
    // f32 arithmetic throughout the tiled path: errors of about 2e-7 here. An
    // f16 accumulator (the one-row path's; 11 bits) is off by more than 1e-5
    // on outputs of this size.
    constexpr double kTolerance = 1e-5;
    const double plain = worst(first, kQueries, false);
    const double masked = worst(attend(rows(queries, total, 0, 300), 300, keys, values, threads, true), 300, true);
    constexpr int kFewerKeys = 1500;
    std::vector<ggml_fp16_t> fewer_keys, fewer_values;
    for (int h = 0; h < kHeads; ++h) {
        const size_t from = static_cast<size_t>(h) * kKeys * kDim, to = from + static_cast<size_t>(kFewerKeys) * kDim;
        fewer_keys.insert(fewer_keys.end(), keys.begin() + from, keys.begin() + to);
        fewer_values.insert(fewer_values.end(), values.begin() + from, values.begin() + to);
    }
    const double fewer = worst(attend(rows(queries, total, 0, kQueries), kQueries, fewer_keys, fewer_values, threads), kQueries, false, kFewerKeys);
    for (const auto & [what, error] : {std::pair{"without a mask", plain}, std::pair{"with a causal mask", masked}, std::pair{"over 1,500 keys", fewer}}) {
        if (error > kTolerance) {
            std::printf("largest error against the double-precision attention %s: %g\n", what, error);
            ++failures;
        }
    }
    if (failures) std::printf("fa tiles: %d mismatches\n", failures);
    else std::printf("fa tiles: all equal (largest error %.1e without a mask, %.1e with, %.1e over 1,500 keys)\n", plain, masked, fewer);
    return failures ? 1 : 0;
}
