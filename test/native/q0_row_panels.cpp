// Checks the q0-row-panels patch (cmake/whisper-patches.cmake): where the
// library says it built them (stt_q0_row_panels), q8_0 products of 16
// columns or more take 8-row panels (16-row on AVX-512 with VNNI: the same
// arithmetic, so the same check), with other roundings than upstream's
// tiles. The weights are quantized by ggml_quantize_chunk, the columns by
// the CPU quantizer mul_mat itself uses, so the check sees the same bytes:
// - the panels' rows must be, bit for bit, a scalar copy of their arithmetic
//   (each block's exact integer sum times the exact product of the two
//   scales, added with one fused multiply-add, block after block), which
//   also shows that the panels ran;
// - they must lie within (blocks + 1) float roundings of exact arithmetic on
//   the same quantized values (the worst error is printed, beside that of
//   ggml's one-column dot products);
// - a column's outputs must be the same bits whatever the column count (16
//   to 23: 4-column tiles, 8- and 4-column ones in 16-row panels, and the 1
//   to 3 left over) and the thread count.
// 67 and 71 rows leave 3 and 7 rows to upstream's tiles (8- or 16-row panels). Exit 0 when all hold.
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

extern "C" int stt_q0_row_panels(void);  // the patched sgemm.cpp

namespace {

constexpr int kBlock = 32;  // QK8_0

struct Block {
    ggml_fp16_t d;
    int8_t qs[kBlock];
};
static_assert(sizeof(Block) == 34, "block_q8_0 is a half scale and 32 bytes");

// weights (rows x inner, q8_0) times columns (inner x n, f32): rows x n.
std::vector<float> product(const std::vector<Block> & weights, int rows, const std::vector<float> & columns, int inner,
                           int n, int threads) {
    ggml_init_params params = {size_t(64) << 20, nullptr, false};
    ggml_context * ctx = ggml_init(params);
    ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, inner, rows);
    std::memcpy(a->data, weights.data(), weights.size() * sizeof(Block));
    ggml_tensor * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, inner, n);
    std::memcpy(b->data, columns.data(), sizeof(float) * inner * n);
    return compute_and_free(ctx, ggml_mul_mat(ctx, a, b), threads);
}

long integer_dot(const Block & a, const Block & b) {
    long sum = 0;
    for (int t = 0; t < kBlock; ++t) sum += long(a.qs[t]) * b.qs[t];
    return sum;
}

// Row i of the weights times column j, exactly (double holds every term and
// the sum to far below f32's rounding), and the sum of its blocks' magnitudes.
struct Exact { double value, magnitude; };
Exact exact_product(const std::vector<Block> & weights, const std::vector<Block> & columns, int blocks, int i, int j) {
    Exact e = {0, 0};
    for (int l = 0; l < blocks; ++l) {
        const Block & a = weights[size_t(i) * blocks + l];
        const Block & b = columns[size_t(j) * blocks + l];
        const double term = double(ggml_fp16_to_fp32(a.d)) * ggml_fp16_to_fp32(b.d) * double(integer_dot(a, b));
        e.value += term;
        e.magnitude += std::fabs(term);
    }
    return e;
}

}  // namespace

int main(int argc, char ** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
    const int height = stt_q0_row_panels();  // rows per panel: 8 (AVX2), 16 (AVX-512 VNNI), 0 (none)
    const bool panels = height != 0;
    if (panels)
        std::printf("q0 row panels: the panel path, %d rows\n", height);
    else
        std::printf("q0 row panels: no panel path in this build (upstream's tiles are checked)\n");
    std::mt19937 random(20261129);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const ggml_from_float_t quantize = ggml_get_type_traits_cpu(GGML_TYPE_Q8_0)->from_float;
    const double unit = std::ldexp(1.0, -24);
    int failures = 0;
    double worst_panels = 0, worst_one_column = 0;
    auto fail = [&](const char * what, int inner, int rows, int i, int j, double got, double want) {
        if (failures < 10)
            std::printf("%s: inner %d, %d rows, row %d, column %d: %.9g, expected %.9g\n", what, inner, rows, i, j, got,
                        want);
        ++failures;
    };

    for (int rows : {67, 71})
    for (int inner : {512, 2048}) {  // Whisper base's rows: 16 and 64 blocks
        const int blocks = inner / kBlock;
        const int panel_rows = panels ? rows / height * height : 0;
        std::vector<float> raw(size_t(rows) * inner);
        for (float & w : raw) w = normal(random) * 0.05f;
        std::vector<Block> weights(size_t(rows) * blocks);
        ggml_quantize_chunk(GGML_TYPE_Q8_0, raw.data(), weights.data(), 0, rows, inner, nullptr);

        const int most = 23;
        std::vector<float> columns(size_t(inner) * most);
        for (float & x : columns) x = normal(random) * 3.0f;
        std::vector<Block> quantized(size_t(most) * blocks);
        for (int j = 0; j < most; ++j)
            quantize(columns.data() + size_t(j) * inner, quantized.data() + size_t(j) * blocks, inner);

        const std::vector<float> widest = product(weights, rows, columns, inner, most, threads);
        for (int j = 0; j < most; ++j) {
            for (int i = 0; i < panel_rows; ++i) {
                float model = 0;
                for (int l = 0; l < blocks; ++l) {
                    const Block & a = weights[size_t(i) * blocks + l];
                    const Block & b = quantized[size_t(j) * blocks + l];
                    const float scale = ggml_fp16_to_fp32(a.d) * ggml_fp16_to_fp32(b.d);
                    model = std::fma(float(integer_dot(a, b)), scale, model);
                }
                const auto [exact, magnitude] = exact_product(weights, quantized, blocks, i, j);
                const float got = widest[size_t(j) * rows + i];
                if (std::memcmp(&got, &model, sizeof got) != 0) fail("not the panels' arithmetic", inner, rows, i, j, got, model);
                const double relative = magnitude > 0 ? std::fabs(double(got) - exact) / (unit * magnitude) : 0;
                if (relative > worst_panels) worst_panels = relative;
                if (relative > blocks + 1) fail("beyond f32 roundings", inner, rows, i, j, got, exact);
            }
        }
        // ggml's own dot products on the same values, for comparison: one column at a time.
        for (int j = 0; j < 4; ++j) {
            const std::vector<float> column(columns.begin() + size_t(j) * inner, columns.begin() + size_t(j + 1) * inner);
            const std::vector<float> alone = product(weights, rows, column, inner, 1, threads);
            for (int i = 0; i < rows; ++i) {
                const auto [exact, magnitude] = exact_product(weights, quantized, blocks, i, j);
                const double relative = magnitude > 0 ? std::fabs(double(alone[i]) - exact) / (unit * magnitude) : 0;
                if (relative > worst_one_column) worst_one_column = relative;
            }
        }
        // The same bits whatever the column count and the thread count.
        for (int n = 16; n < most; ++n) {
            for (int t : {1, threads + 1}) {
                const std::vector<float> fewer = product(weights, rows, columns, inner, n, t);
                if (std::memcmp(fewer.data(), widest.data(), sizeof(float) * rows * n) != 0) {
                    std::printf("inner %d, %d rows: %d columns on %d threads differ from %d columns on %d\n", inner, rows,
                                n, t, most, threads);
                    ++failures;
                }
            }
        }
    }
    if (panels)
        std::printf("q0 row panels: worst error %.2f roundings of the blocks' magnitudes (one-column dot products: %.2f)\n",
                    worst_panels, worst_one_column);
    std::printf(failures ? "q0 row panels: %d failures\n" : "q0 row panels: all hold%.0d\n", failures);
    return failures ? 1 : 0;
}
