// stt-gateway (cmake/whisper-patches.cmake, dft-twiddles): whisper.cpp's
// log-mel FFT splits each 400-sample frame down to sixteen 25-point DFTs,
// and its dft() works out every twiddle's table index (a multiply and a
// modulo) and loads it, one product at a time. The twiddles of the 25-point
// DFT are laid out once here, [n][k], from the same table, and four values
// of k are summed at a time with SSE2: each k's sums take the same products
// in the same order with the same roundings (a multiply, then an add; this
// file is built without FMA), so the results are bit for bit the same
// (test/native/dft_twiddles.cpp). Inserted into whisper.cpp ahead of dft(),
// which calls it first.
// Without FMA only: a compiler allowed to fuse the upstream loop's multiply
// and add could round it otherwise.
#if defined(__SSE2__) && !defined(__FMA__)
#include <emmintrin.h>

struct stt_dft_twiddles {
    static constexpr int N = 25;   // WHISPER_N_FFT = 400 = 16 x 25: the only odd size the FFT reaches
    static constexpr int W = 28;   // N rounded up to 4 lanes
    alignas(16) float c[N][W];     // cos(2 pi k n / N) as dft() reads it; 0 for k >= N
    alignas(16) float s[N][W];     // sin, likewise
    stt_dft_twiddles() {
        const int step = SIN_COS_N_COUNT / N;
        for (int n = 0; n < N; ++n) {
            for (int k = 0; k < W; ++k) {
                const int idx = k < N ? (k * n * step) % SIN_COS_N_COUNT : 0;
                c[n][k] = k < N ? global_cache.cos_vals[idx] : 0.0f;
                s[n][k] = k < N ? global_cache.sin_vals[idx] : 0.0f;
            }
        }
    }
};

static bool stt_dft(const float * in, int N, float * out) {
    if (N != stt_dft_twiddles::N || SIN_COS_N_COUNT % N != 0) return false;
    static const stt_dft_twiddles t;
    for (int k = 0; k < stt_dft_twiddles::W; k += 4) {
        __m128 re = _mm_setzero_ps();
        __m128 im = _mm_setzero_ps();
        for (int n = 0; n < N; ++n) {
            const __m128 x = _mm_set1_ps(in[n]);
            re = _mm_add_ps(re, _mm_mul_ps(x, _mm_load_ps(&t.c[n][k])));  // re += in[n]*cos
            im = _mm_sub_ps(im, _mm_mul_ps(x, _mm_load_ps(&t.s[n][k])));  // im -= in[n]*sin
        }
        alignas(16) float r[4], i[4];
        _mm_store_ps(r, re);
        _mm_store_ps(i, im);
        for (int j = 0; j < 4 && k + j < N; ++j) {
            out[(k + j) * 2 + 0] = r[j];
            out[(k + j) * 2 + 1] = i[j];
        }
    }
    return true;
}
#else
static bool stt_dft(const float *, int, float *) {
    return false;
}
#endif

