// Checks the f16c-conversions patch (cmake/whisper-patches.cmake): every way
// ggml-cpu's patched ops.cpp converts f32 to f16 must give the bits of
// ggml's software conversion (ggml_fp32_to_fp16, ggml-base, which the patch
// does not touch): ggml_cpy into f16 with contiguous rows (a row at a time,
// rows of 4,096 and of 7, whose tail is converted one value at a time), from
// a transposed source (one value at a time) and into a strided view (ggml's
// generic loop), and im2col to f16 (the convolutions' input). The values:
// every f16 value, the midpoints between neighbouring f16 values and one
// float either side of them (the ties round to even), the overflow edge,
// subnormals, zeros, infinities, NaNs and random bit patterns. Outputs must
// match bit for bit (two NaNs match). Exit 0 when all do.
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

namespace {

std::vector<uint16_t> compute_f16(ggml_context * ctx, ggml_tensor * out, int threads) {
    ggml_cgraph * graph = ggml_new_graph(ctx);
    ggml_build_forward_expand(graph, out);
    if (ggml_graph_compute_with_ctx(ctx, graph, threads) != GGML_STATUS_SUCCESS) {
        std::fprintf(stderr, "ggml_graph_compute_with_ctx failed\n");
        std::exit(2);
    }
    std::vector<uint16_t> bits(ggml_nelements(out));
    for (int64_t i = 0; i < ggml_nelements(out); ++i) {
        // Read through the strides: `out` may be a view.
        const int64_t i0 = i % out->ne[0], i1 = i / out->ne[0];
        std::memcpy(&bits[i], static_cast<const char *>(out->data) + i0 * out->nb[0] + i1 * out->nb[1], 2);
    }
    ggml_free(ctx);
    return bits;
}

ggml_context * context() {
    ggml_init_params params = {256 * 1024 * 1024, nullptr, false};
    return ggml_init(params);
}

ggml_tensor * f32_matrix(ggml_context * ctx, const std::vector<float> & values, int64_t row) {
    ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, row, static_cast<int64_t>(values.size()) / row);
    std::memcpy(x->data, values.data(), sizeof(float) * values.size());
    return x;
}

/** ggml_cpy of rows `row` long into a contiguous f16 tensor. */
std::vector<uint16_t> copy_rows(const std::vector<float> & values, int64_t row, int threads) {
    ggml_context * ctx = context();
    ggml_tensor * x = f32_matrix(ctx, values, row);
    return compute_f16(ctx, ggml_cpy(ctx, x, ggml_new_tensor_2d(ctx, GGML_TYPE_F16, x->ne[0], x->ne[1])), threads);
}

/** ggml_cpy of a transposed f32 matrix into a contiguous f16 one: out[j][i] = in[i][j]. */
std::vector<uint16_t> copy_transposed(const std::vector<float> & values, int64_t row, int threads) {
    ggml_context * ctx = context();
    ggml_tensor * t = ggml_transpose(ctx, f32_matrix(ctx, values, row));
    return compute_f16(ctx, ggml_cpy(ctx, t, ggml_new_tensor_2d(ctx, GGML_TYPE_F16, t->ne[0], t->ne[1])), threads);
}

/** ggml_cpy into every other column of a wider f16 tensor (a view that is not contiguous). */
std::vector<uint16_t> copy_strided(const std::vector<float> & values, int64_t row, int threads) {
    ggml_context * ctx = context();
    ggml_tensor * x = f32_matrix(ctx, values, row);
    ggml_tensor * wide = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 2 * row, x->ne[1]);
    ggml_tensor * view = ggml_view_2d(ctx, wide, row, x->ne[1], wide->nb[1], 0);
    return compute_f16(ctx, ggml_cpy(ctx, x, view), threads);
}

/** im2col of a 1-D f32 input (one-wide kernel, no padding): out[t][c] = in[c][t]. */
std::vector<uint16_t> im2col(const std::vector<float> & values, int64_t row, int threads) {
    ggml_context * ctx = context();
    ggml_tensor * input = f32_matrix(ctx, values, row);  // [IW = row, IC]
    ggml_tensor * kernel = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 1, input->ne[1], 1);  // [KW, IC, OC]
    return compute_f16(ctx, ggml_im2col(ctx, kernel, input, 1, 0, 0, 0, 1, 0, false, GGML_TYPE_F16), threads);
}

int failures = 0;

void expect(const char * what, const std::vector<float> & in, const std::vector<uint16_t> & out, int64_t row, bool transposed) {
    const int64_t rows = static_cast<int64_t>(in.size()) / row;
    for (int64_t i = 0; i < static_cast<int64_t>(in.size()); ++i) {
        // Transposed outputs hold column i % row of the input's row i / row at [i % row][i / row].
        const int64_t at = transposed ? (i % row) * rows + i / row : i;
        const uint16_t want = ggml_fp32_to_fp16(in[i]);
        const uint16_t got = out[at];
        const bool both_nan = std::isnan(in[i]) && (got & 0x7c00) == 0x7c00 && (got & 0x03ff) != 0;
        if (got != want && !both_nan) {
            if (failures < 5) std::printf("%s: %a gave %04x, software %04x\n", what, in[i], got, want);
            ++failures;
        }
    }
}

}  // namespace

int main(int argc, char ** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
    std::vector<float> values;
    for (uint32_t h = 0; h < 65536; ++h) values.push_back(ggml_fp16_to_fp32(static_cast<ggml_fp16_t>(h)));
    // The midpoint between each pair of neighbouring finite f16 values, and one float either side of it.
    for (uint32_t h = 0; h < 0x7bff; ++h) {
        for (const float sign : {1.0f, -1.0f}) {
            const double mid = (static_cast<double>(ggml_fp16_to_fp32(static_cast<ggml_fp16_t>(h))) + ggml_fp16_to_fp32(static_cast<ggml_fp16_t>(h + 1))) / 2;
            const float m = static_cast<float>(mid) * sign;
            values.push_back(m);
            values.push_back(std::nextafter(m, INFINITY));
            values.push_back(std::nextafter(m, -INFINITY));
        }
    }
    const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                              65504.0f, 65519.99f, 65520.0f, -65520.0f, 1e9f, std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(),
                              std::numeric_limits<float>::min(), 5.96e-8f, 2.98e-8f, 2.9802322e-8f, 1e-30f, -1e-30f};
    for (const float s : specials) values.push_back(s);
    std::mt19937 random(20261203);
    while (values.size() % (7 * 4096) != 0) {
        uint32_t bits = random();
        float f;
        std::memcpy(&f, &bits, 4);
        values.push_back(f);
    }
    expect("ggml_cpy, rows of 4096", values, copy_rows(values, 4096, threads), 4096, false);
    expect("ggml_cpy, rows of 7", values, copy_rows(values, 7, threads), 7, false);
    expect("ggml_cpy, transposed", values, copy_transposed(values, 4096, threads), 4096, true);
    expect("ggml_cpy, into a strided view", values, copy_strided(values, 4096, threads), 4096, false);
    expect("im2col", values, im2col(values, 4096, threads), 4096, true);
    // Whether ggml-cpu was built with F16C (-march=native on a CPU with it): without, the patch leaves ggml's own code and this compares it with itself.
    std::printf("f16c conversions: F16C %s\n", ggml_cpu_has_f16c() ? "compiled in" : "not compiled in");
    if (failures) std::printf("f16c conversions: %d mismatches\n", failures);
    else std::printf("f16c conversions: all equal (%zu values, 5 ways)\n", values.size());
    return failures ? 1 : 0;
}
