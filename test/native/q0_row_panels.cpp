// Checks the q0-row-panels patch (cmake/whisper-patches.cmake): q8_0
// products of 16 columns or more take 8-row panels on AVX2 without VNNI,
// with other roundings than upstream's tiles. Each product is checked
// against exact arithmetic on the same quantized values (weights quantized
// by ggml_quantize_chunk, columns by the CPU quantizer mul_mat itself uses):
// every output must lie within (blocks + 2) float roundings of the sum of
// its blocks' magnitudes, the error the panel's arithmetic allows (one
// rounding of each block's scale and one of each block's multiply-add).
// Upstream's tiles allow more (a rounding per lane); the worst error of each
// is printed. A column's outputs must also be the same bits whatever the
// column count (16 to 23, 4-column tiles and the 1 to 3 left over) and the
// thread count. 67 rows leave 3 to upstream's tiles. Exit 0 when all hold.
// Usage: stt-q0-row-panels [threads]
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

constexpr int kRows = 67;
constexpr int kBlock = 32;  // QK8_0

struct Block {
    ggml_fp16_t d;
    int8_t qs[kBlock];
};
static_assert(sizeof(Block) == 34, "block_q8_0 is a half scale and 32 bytes");

// weights (kRows x inner, q8_0) times columns (inner x n, f32): kRows x n.
std::vector<float> product(const std::vector<Block> & weights, const std::vector<float> & columns, int inner, int n,
                           int threads) {
    ggml_init_params params = {size_t(64) << 20, nullptr, false};
    ggml_context * ctx = ggml_init(params);
    ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, inner, kRows);
    std::memcpy(a->data, weights.data(), weights.size() * sizeof(Block));
    ggml_tensor * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, inner, n);
    std::memcpy(b->data, columns.data(), sizeof(float) * inner * n);
    return compute_and_free(ctx, ggml_mul_mat(ctx, a, b), threads);
}

}  // namespace

int main(int argc, char ** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
#if defined(__AVX2__) && defined(__F16C__) && !defined(__AVX512VNNI__) && !defined(__AVXVNNI__)
    std::printf("q0 row panels: the panel path\n");
#else
    std::printf("q0 row panels: no panel path in this build (upstream's tiles are checked)\n");
#endif
    std::mt19937 random(20261129);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const ggml_from_float_t quantize = ggml_get_type_traits_cpu(GGML_TYPE_Q8_0)->from_float;
    const double unit = std::ldexp(1.0, -24);
    int failures = 0;
    double worst_panels = 0, worst_upstream = 0;

    for (int inner : {512, 2048}) {  // Whisper base's rows: 16 and 64 blocks
        const int blocks = inner / kBlock;
        std::vector<float> raw(size_t(kRows) * inner);
        for (float & w : raw) w = normal(random) * 0.05f;
        std::vector<Block> weights(size_t(kRows) * blocks);
        ggml_quantize_chunk(GGML_TYPE_Q8_0, raw.data(), weights.data(), 0, kRows, inner, nullptr);

        const int most = 23;
        std::vector<float> columns(size_t(inner) * most);
        for (float & x : columns) x = normal(random) * 3.0f;
        std::vector<Block> quantized(size_t(most) * blocks);
        for (int j = 0; j < most; ++j)
            quantize(columns.data() + size_t(j) * inner, quantized.data() + size_t(j) * blocks, inner);

        const std::vector<float> widest = product(weights, columns, inner, most, threads);
        for (int j = 0; j < most; ++j) {
            for (int i = 0; i < kRows; ++i) {
                double exact = 0, magnitude = 0;
                for (int l = 0; l < blocks; ++l) {
                    const Block & a = weights[size_t(i) * blocks + l];
                    const Block & b = quantized[size_t(j) * blocks + l];
                    long sum = 0;
                    for (int t = 0; t < kBlock; ++t) sum += long(a.qs[t]) * b.qs[t];
                    const double term = double(ggml_fp16_to_fp32(a.d)) * double(ggml_fp16_to_fp32(b.d)) * double(sum);
                    exact += term;
                    magnitude += std::fabs(term);
                }
                const double error = std::fabs(double(widest[size_t(j) * kRows + i]) - exact);
                const double allowed = (blocks + 2) * unit * magnitude;
                const double relative = magnitude > 0 ? error / (unit * magnitude) : 0;
                if (relative > worst_panels) worst_panels = relative;
                if (error > allowed) {
                    if (failures < 10)
                        std::printf("inner %d, row %d, column %d: %.9g, exact %.9g (%.1f roundings off, %d allowed)\n",
                                    inner, i, j, widest[size_t(j) * kRows + i], exact, relative, blocks + 2);
                    ++failures;
                }
            }
        }
        // Upstream's error on the same values: one column at a time takes ggml's own dot product.
        for (int j = 0; j < 4; ++j) {
            const std::vector<float> column(columns.begin() + size_t(j) * inner, columns.begin() + size_t(j + 1) * inner);
            const std::vector<float> alone = product(weights, column, inner, 1, threads);
            for (int i = 0; i < kRows; ++i) {
                double exact = 0, magnitude = 0;
                for (int l = 0; l < blocks; ++l) {
                    const Block & a = weights[size_t(i) * blocks + l];
                    const Block & b = quantized[size_t(j) * blocks + l];
                    long sum = 0;
                    for (int t = 0; t < kBlock; ++t) sum += long(a.qs[t]) * b.qs[t];
                    const double term = double(ggml_fp16_to_fp32(a.d)) * double(ggml_fp16_to_fp32(b.d)) * double(sum);
                    exact += term;
                    magnitude += std::fabs(term);
                }
                const double relative = magnitude > 0 ? std::fabs(double(alone[i]) - exact) / (unit * magnitude) : 0;
                if (relative > worst_upstream) worst_upstream = relative;
            }
        }
        // The same bits whatever the column count and the thread count.
        for (int n = 16; n < most; ++n) {
            for (int t : {1, threads + 1}) {
                const std::vector<float> fewer = product(weights, columns, inner, n, t);
                if (std::memcmp(fewer.data(), widest.data(), sizeof(float) * kRows * n) != 0) {
                    std::printf("inner %d: %d columns on %d threads differ from %d columns on %d\n", inner, n, t, most,
                                threads);
                    ++failures;
                }
            }
        }
    }
    std::printf("q0 row panels: worst error %.2f roundings of the blocks' magnitudes (one-column dot products: %.2f)\n",
                worst_panels, worst_upstream);
    std::printf(failures ? "q0 row panels: %d failures\n" : "q0 row panels: all within bounds%.0d\n", failures);
    return failures ? 1 : 0;
}
