// Checks the fa-tile-loops patch (cmake/whisper-patches.cmake) directly:
// cmake/patches/fa-tile-loops.cpp, included here as it is inserted, compiled
// with ggml-cpu's own flags, against the loops it replaces in ggml's tiled
// flash attention: ggml_vec_max_f32 (the pinned vec.h) for a row's maximum,
// and the per-value GGML_CPU_FP16_TO_FP32 loop for the keys packed
// transposed. Rows of every length from 1 to 70 (vectors and what is left of
// them), with -inf (masked scores), both zeros and random scores; keys of 64
// dimensions (Whisper's heads) and of 40 and 72, in tiles of 1 to 64 keys.
// Prints which path ran (AVX-512, AVX2 or none). Exit 0 when all match bit
// for bit (a maximum of zero may differ only in its sign: see the patch).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

// ggml's private headers define helpers this check does not call.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "ggml-cpu.h"
#include "ggml-impl.h"
#include "ggml-cpu-impl.h"
#include "simd-mappings.h"
#include "vec.h"
#pragma GCC diagnostic pop

#include "../../cmake/patches/fa-tile-loops.cpp"

namespace {

bool same_max(const std::vector<float> & row) {
    float upstream;
    ggml_vec_max_f32((int) row.size(), &upstream, row.data());
    const float ours = stt_fa_max((int) row.size(), row.data());
    if (std::memcmp(&ours, &upstream, sizeof(float)) == 0 || (ours == 0.0f && upstream == 0.0f)) return true;
    std::printf("fa tile loops: the maximum of %zu values is %.9g, ggml's %.9g\n", row.size(), ours, upstream);
    return false;
}

// Keys [0, n) of a tile, each row_bytes apart, packed as the patched loop
// does (the patch's vectors, then the scalar loop for the rest) and as ggml's
// loop alone does.
bool same_packing(int n, int dk, std::mt19937 & rng) {
    constexpr int ld = 64;  // the tile's width (GGML_FA_TILE_KV)
    const size_t row_bytes = (size_t) dk * sizeof(ggml_fp16_t) + 32;  // rows with a gap, as a view's stride may have
    std::vector<char> keys(row_bytes * n);
    std::uniform_int_distribution<int> bits(0, 0x7BFF);  // finite f16 magnitudes; the sign below
    for (int t = 0; t < n; ++t)
        for (int d = 0; d < dk; ++d) {
            const ggml_fp16_t h = (ggml_fp16_t) (bits(rng) | (rng() & 1 ? 0x8000 : 0));
            std::memcpy(keys.data() + t * row_bytes + d * sizeof(ggml_fp16_t), &h, sizeof h);
        }
    std::vector<float> ours((size_t) dk * ld, -1.0f), upstream((size_t) dk * ld, -1.0f);
    const int packed = stt_fa_pack_keys(keys.data(), row_bytes, n, dk, ours.data(), ld);
    for (int t = packed; t < n; ++t)
        for (int d = 0; d < dk; ++d) ours[d * ld + t] = GGML_CPU_FP16_TO_FP32(((const ggml_fp16_t *) (keys.data() + t * row_bytes))[d]);
    for (int t = 0; t < n; ++t)
        for (int d = 0; d < dk; ++d) upstream[d * ld + t] = GGML_CPU_FP16_TO_FP32(((const ggml_fp16_t *) (keys.data() + t * row_bytes))[d]);
    if (std::memcmp(ours.data(), upstream.data(), sizeof(float) * ours.size()) == 0) return true;
    std::printf("fa tile loops: %d keys of %d dimensions packed differently (%d by the patch's vectors)\n", n, dk, packed);
    return false;
}

}  // namespace

int main() {
    ggml_cpu_init();  // fills the f16 table GGML_CPU_FP16_TO_FP32 may read
#if defined(__AVX512F__)
    std::printf("fa tile loops: the AVX-512 path\n");
#elif defined(__AVX2__) && defined(__F16C__)
    std::printf("fa tile loops: the AVX2 path\n");
#else
    std::printf("fa tile loops: no vector path (ggml's loops run)\n");
#endif
    std::mt19937 rng(20261129);
    std::normal_distribution<float> score(0.0f, 4.0f);
    bool ok = true;
    int checks = 0;
    for (int n = 1; n <= 70; ++n) {
        std::vector<float> row(n);
        for (float & x : row) x = score(rng);
        ok = same_max(row) && ok;
        // the largest in each position in turn, and masked (-inf) scores around it
        for (int at = 0; at < n; ++at) {
            std::vector<float> masked(n, -INFINITY);
            masked[at] = score(rng);
            ok = same_max(masked) && ok;
            std::vector<float> peak = row;
            peak[at] = 1e6f;
            ok = same_max(peak) && ok;
            checks += 2;
        }
        ok = same_max(std::vector<float>(n, -INFINITY)) && ok;
        ok = same_max(std::vector<float>(n, -0.0f)) && ok;
        checks += 3;
    }
    for (const int dk : {64, 40, 72})
        for (int n = 1; n <= 64; ++n, ++checks) ok = same_packing(n, dk, rng) && ok;
    if (!ok) return 1;
    std::printf("fa tile loops: all equal (%d checks)\n", checks);
    return 0;
}
