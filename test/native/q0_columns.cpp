// Checks the q0-one-pass patch (cmake/whisper-patches.cmake): a q8_0 product
// with n columns must give, column by column, bit for bit what n products
// of one column give. One-column products take ggml's own dot products
// (tinyBLAS takes 2 columns or more); the patched one-pass path takes 3, 5
// and 7 columns with 16 vector registers (AVX2), 5, 6 and 7 with 32
// (AVX-512), 5 being the beam decoder's; 67 rows leave 3 over the 4-row
// tiles. Exit 0 when all match.
// Usage: stt-q0-columns [threads]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "ggml-cpu.h"
#include "ggml.h"
#include "ggml_compute.h"

namespace {

constexpr int kInner = 512;  // a Whisper base row (16 q8_0 blocks)
constexpr int kRows = 67;

// weights (kRows x kInner, q8_0) times columns (kInner x n, f32): kRows x n.
std::vector<float> product(const std::vector<float> & weights, const std::vector<float> & columns, int n, int threads) {
    ggml_init_params params = {256 * 1024 * 1024, nullptr, false};
    ggml_context * ctx = ggml_init(params);
    ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, kInner, kRows);
    ggml_quantize_chunk(GGML_TYPE_Q8_0, weights.data(), a->data, 0, kRows, kInner, nullptr);
    ggml_tensor * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, kInner, n);
    std::memcpy(b->data, columns.data(), sizeof(float) * kInner * n);
    return compute_and_free(ctx, ggml_mul_mat(ctx, a, b), threads);
}

}  // namespace

int main(int argc, char ** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
    std::mt19937 random(20261126);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> weights(kRows * kInner);
    for (float & w : weights) w = normal(random);

    int failures = 0;
    for (int n : {2, 3, 4, 5, 6, 7}) {
        std::vector<float> columns(kInner * n);
        for (float & x : columns) x = normal(random);
        const std::vector<float> together = product(weights, columns, n, threads);
        for (int j = 0; j < n; ++j) {
            const std::vector<float> column(columns.begin() + j * kInner, columns.begin() + (j + 1) * kInner);
            const std::vector<float> alone = product(weights, column, 1, threads);
            if (std::memcmp(alone.data(), together.data() + j * kRows, sizeof(float) * kRows) != 0) {
                std::printf("columns %d: column %d differs from its one-column product\n", n, j);
                ++failures;
            }
        }
    }
    std::printf(failures ? "q0 columns: %d mismatches\n" : "q0 columns: all equal%.0d\n", failures);
    return failures ? 1 : 0;
}
