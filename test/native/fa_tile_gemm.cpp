// Checks the fa-tile-gemm patch (cmake/whisper-patches.cmake): the tiled
// flash attention's products through stt_fa_gemm (cmake/patches/fa-tile-gemm.cpp,
// included here as it is inserted) must give the bits of ggml's simd_gemm
// (the pinned ggml-cpu/simd-gemm.h, included as is), on the shapes the
// attention uses (128 query rows x 64 or 128 dimensions x 64 keys, and back;
// 128 rows leave a tail of two, which simd_gemm takes), on other row counts
// (a multiple of six, and tails of one to five rows), and on 128 columns (two
// blocks of 64). Shapes under six rows or with columns not a multiple of 64
// run simd_gemm itself and are left out. C starts non-zero, as the output sum
// does. Exit 0 when all match.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

// ggml's private headers define helpers this check does not call.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "ggml-cpu-impl.h"
#include "simd-gemm.h"
#pragma GCC diagnostic pop

#include "../../cmake/patches/fa-tile-gemm.cpp"

namespace {

bool same_bits(int M, int K, int N, std::mt19937 & rng) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> A(static_cast<size_t>(M) * K), B(static_cast<size_t>(K) * N), C0(static_cast<size_t>(M) * N);
    for (float & x : A) x = normal(rng);
    for (float & x : B) x = normal(rng);
    for (float & x : C0) x = normal(rng);
    std::vector<float> ours = C0, ggml = C0;
    stt_fa_gemm(ours.data(), A.data(), B.data(), M, K, N);
    simd_gemm(ggml.data(), A.data(), B.data(), M, K, N);
    if (std::memcmp(ours.data(), ggml.data(), sizeof(float) * ours.size()) != 0) {
        for (size_t i = 0; i < ours.size(); ++i) {
            if (std::memcmp(&ours[i], &ggml[i], sizeof(float)) != 0) {
                std::printf("fa tile gemm: %d x %d x %d differs at row %zu column %zu: %.9g against ggml's %.9g\n", M, K, N,
                            i / N, i % N, ours[i], ggml[i]);
                break;
            }
        }
        return false;
    }
    return true;
}

}  // namespace

int main() {
#if !(defined(__AVX512F__) && defined(__GNUC__))
    std::printf("fa tile gemm: skipped (a build without AVX-512 runs ggml's simd_gemm itself)\n");
    return 0;
#endif
    std::mt19937 rng(20261127);
    // scores = Q K (128 x DK x 64), output += P V (128 x 64 x DV); then tails.
    const int shapes[][3] = {{128, 64, 64}, {128, 128, 64}, {128, 64, 128}, {6, 64, 64}, {7, 64, 64}, {12, 1, 64}, {100, 64, 64}, {125, 64, 128}};
    bool ok = true;
    for (const auto & s : shapes) ok = same_bits(s[0], s[1], s[2], rng) && ok;
    if (!ok) return 1;
    std::printf("fa tile gemm: all equal (%zu shapes)\n", sizeof(shapes) / sizeof(shapes[0]));
    return 0;
}
