// Checks the q0-offset-dot patch (cmake/whisper-patches.cmake): stt_dot
// (cmake/patches/q0-offset-dot.cpp, included here as it is inserted into
// tinyBLAS_Q0_AVX) must give the bits of upstream's
// updot(_mm256_sign_epi8(a, a), _mm256_sign_epi8(b, a)) wherever b holds
// what ggml's q8_0 quantizer writes (-127..127), and a anything (-128..127):
// every pair of byte values in every lane position, then random blocks.
// Where b holds -128 upstream negates it to -128 again; the check prints how
// the two differ there and that stt_dot gives the true sum (with VNNI; without
// it the patch is upstream's code). Compiled with
// ggml-cpu's flags, so it tests the instructions the build ships. Exit 0 when
// all match.
#include <immintrin.h>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>

namespace {

// The members of tinyBLAS_Q0_AVX that stt_dot uses, as the pinned sgemm.cpp has them.
struct Tile {
    inline __m256 updot(__m256i u, __m256i s) {
        __m256i res;
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
        res = _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s);
#elif defined(__AVXVNNI__)
        res = _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), u, s);
#else
        res = _mm256_madd_epi16(_mm256_set1_epi16(1), _mm256_maddubs_epi16(u, s));
#endif
        return _mm256_cvtepi32_ps(res);
    }

#include "../../cmake/patches/q0-offset-dot.cpp"

    __m256 upstream(__m256i a, __m256i b) { return updot(_mm256_sign_epi8(a, a), _mm256_sign_epi8(b, a)); }
};

bool same(Tile & t, const int8_t (&a)[32], const int8_t (&b)[32], const char * what) {
    const __m256i va = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a));
    const __m256i vb = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(b));
    float ours[8], theirs[8];
    _mm256_storeu_ps(ours, t.stt_dot(va, vb));
    _mm256_storeu_ps(theirs, t.upstream(va, vb));
    if (std::memcmp(ours, theirs, sizeof ours) == 0) return true;
    for (int lane = 0; lane < 8; ++lane) {
        if (std::memcmp(&ours[lane], &theirs[lane], sizeof(float)) != 0) {
            std::printf("q0 offset dot: %s: lane %d gives %.9g against upstream's %.9g\n", what, lane, ours[lane], theirs[lane]);
            break;
        }
    }
    return false;
}

} // namespace

int main() {
    Tile t;
    std::mt19937 rng(31);
    std::uniform_int_distribution<int> any_a(-128, 127), quantized(-127, 127);
    int8_t a[32], b[32];
    // Every (a, b) pair at every byte position, the other bytes random.
    for (int pos = 0; pos < 32; ++pos) {
        for (int x = -128; x <= 127; ++x) {
            for (int y = -127; y <= 127; ++y) {
                for (int i = 0; i < 32; ++i) { a[i] = static_cast<int8_t>(any_a(rng)); b[i] = static_cast<int8_t>(quantized(rng)); }
                a[pos] = static_cast<int8_t>(x);
                b[pos] = static_cast<int8_t>(y);
                if (!same(t, a, b, "a byte pair")) return 1;
            }
        }
    }
    // Lanes at the extremes: every byte 127 or -127 (b) and -128 or 127 (a).
    for (int signs = 0; signs < 16; ++signs) {
        for (int i = 0; i < 32; ++i) {
            a[i] = static_cast<int8_t>((signs & 1) ? -128 : 127);
            b[i] = static_cast<int8_t>((signs & 2) ? -127 : 127);
            if ((signs & 4) && i % 2) a[i] = static_cast<int8_t>(-a[i] - 1);
            if ((signs & 8) && i % 3) b[i] = static_cast<int8_t>(-b[i]);
        }
        if (!same(t, a, b, "extreme lanes")) return 1;
    }
    // Where b holds -128 (never written by ggml's quantizer) the two part: upstream negates
    // -128 to -128, stt_dot keeps the true product.
    for (int i = 0; i < 32; ++i) { a[i] = -1; b[i] = 0; }
    b[0] = -128;
    float ours[8], theirs[8];
    _mm256_storeu_ps(ours, t.stt_dot(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(a)), _mm256_loadu_si256(reinterpret_cast<const __m256i *>(b))));
    _mm256_storeu_ps(theirs, t.upstream(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(a)), _mm256_loadu_si256(reinterpret_cast<const __m256i *>(b))));
#if (defined(__AVX512VNNI__) && defined(__AVX512VL__)) || defined(__AVXVNNI__)
    const float expected = 128.0f; // the true product
#else
    const float expected = theirs[0]; // without VNNI the patch is upstream's code
#endif
    if (ours[0] != expected) {
        std::printf("q0 offset dot: (-1) x (-128) gives %g, not %g\n", ours[0], expected);
        return 1;
    }
    std::printf("q0 offset dot: b = -128 (outside q8_0's range): %g, upstream %g\n", ours[0], theirs[0]);
    std::printf("q0 offset dot: all equal\n");
    return 0;
}
