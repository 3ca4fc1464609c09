// Checks the gelu-vector-table patch (cmake/whisper-patches.cmake): ggml's
// GELU through the patched path (16 values at a time on AVX-512, 8 on AVX2) must give the same
// bits as ggml's own one-value-at-a-time loop, which still takes what is
// left of a row after its vectors. The same values go through rows
// 7 long (every value by the loop) and rows 4,096 long (all but none by the
// vector path): every f16 value (so every entry of the table), values around
// the cut-offs at -10 and 10, random values, zeros, infinities, subnormals
// and NaNs. Outputs must match bit for bit (two NaNs match). Exit 0 when all do.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ggml-cpu.h"
#include "ggml.h"
#include "ggml_compute.h"

namespace {

std::vector<float> gelu(const std::vector<float> & values, int row, int threads) {
    ggml_init_params params = {64 * 1024 * 1024, nullptr, false};
    ggml_context * ctx = ggml_init(params);
    ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, row, static_cast<int64_t>(values.size()) / row);
    std::memcpy(x->data, values.data(), sizeof(float) * values.size());
    return compute_and_free(ctx, ggml_gelu(ctx, x), threads);
}

}  // namespace

int main(int argc, char ** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
    std::vector<float> values;
    for (uint32_t h = 0; h < 65536; ++h) values.push_back(ggml_fp16_to_fp32(static_cast<ggml_fp16_t>(h)));
    for (const float edge : {-10.0f, 10.0f})
        for (int step = -64; step <= 64; ++step) values.push_back(std::nextafter(edge, step < 0 ? -INFINITY : INFINITY) + step * 1e-4f);
    const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(), 1e-30f, -1e-30f, 65504.0f, 65520.0f, -70000.0f};
    for (const float s : specials) values.push_back(s);
    std::mt19937 random(20261127);
    std::uniform_real_distribution<float> wide(-12.0f, 12.0f);
    while (values.size() % (7 * 4096) != 0) values.push_back(wide(random));

    const std::vector<float> by_loop = gelu(values, 7, threads);
    const std::vector<float> by_vector = gelu(values, 4096, threads);
    int failures = 0;
    for (size_t i = 0; i < values.size(); ++i) {
        const bool same = std::memcmp(&by_loop[i], &by_vector[i], sizeof(float)) == 0 || (std::isnan(by_loop[i]) && std::isnan(by_vector[i]));
        if (!same) {
            if (failures < 5) std::printf("gelu(%a): %a one at a time, %a by the vector path\n", values[i], by_loop[i], by_vector[i]);
            ++failures;
        }
    }
    if (failures) std::printf("gelu table: %d mismatches of %zu\n", failures, values.size());
    else std::printf("gelu table: all equal (%zu values)\n", values.size());
    return failures ? 1 : 0;
}
