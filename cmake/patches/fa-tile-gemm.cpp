// stt-gateway (cmake/whisper-patches.cmake, fa-tile-gemm): the two products
// of the encoder's tiled flash attention (scores = Q K, output += P V) on
// AVX-512. ggml's simd_gemm kernel keeps a 4 x 64 block of C in registers,
// but the compiler folds the loads of B into every multiply-add, so each row
// loads B again: 20 loads per 16 multiply-adds, more than the load ports
// take. Here six rows share each B vector, held in a register, so a step
// takes 10 loads (4 of B, 6 broadcasts of A) and 24 multiply-adds. Every element of C is the
// same chain of fused multiply-adds over k in the same order as simd_gemm's,
// so the results are bit for bit the same (test/native/fa_tile_gemm.cpp).
// Inserted into ggml-cpu's ops.cpp ahead of
// ggml_compute_forward_flash_attn_ext_tiled.
#if defined(__AVX512F__) && defined(__GNUC__)
// C[M x N] += A[M x K] * B[K x N], all row-major, N also C's and B's stride.
static void stt_fa_gemm(float * GGML_RESTRICT C, const float * GGML_RESTRICT A, const float * GGML_RESTRICT B,
                        int M, int K, int N) {
    constexpr int RM = 6;   // rows of C per block
    constexpr int RN = 4;   // vectors of 16 columns per block: 24 sums, 4 of B, 1 of A in 32 registers
    if (N % (16 * RN) != 0) {
        simd_gemm(C, A, B, M, K, N);
        return;
    }
    int i = 0;
    for (; i + RM <= M; i += RM) {
        for (int j = 0; j < N; j += 16 * RN) {
            __m512 acc[RM][RN];
            for (int r = 0; r < RM; ++r)
                for (int c = 0; c < RN; ++c) acc[r][c] = _mm512_loadu_ps(C + (size_t) (i + r) * N + j + 16 * c);
            for (int k = 0; k < K; ++k) {
                __m512 b[RN];
                for (int c = 0; c < RN; ++c) {
                    b[c] = _mm512_loadu_ps(B + (size_t) k * N + j + 16 * c);
                    // keep b in a register: otherwise each row's multiply-add loads it again
                    __asm__("" : "+v"(b[c]));
                }
                for (int r = 0; r < RM; ++r) {
                    const __m512 a = _mm512_set1_ps(A[(size_t) (i + r) * K + k]);
                    for (int c = 0; c < RN; ++c) acc[r][c] = _mm512_fmadd_ps(b[c], a, acc[r][c]);
                }
            }
            for (int r = 0; r < RM; ++r)
                for (int c = 0; c < RN; ++c) _mm512_storeu_ps(C + (size_t) (i + r) * N + j + 16 * c, acc[r][c]);
        }
    }
    if (i < M) simd_gemm(C + (size_t) i * N, A + (size_t) i * K, B, M - i, K, N);
}
#else
static inline void stt_fa_gemm(float * GGML_RESTRICT C, const float * GGML_RESTRICT A, const float * GGML_RESTRICT B,
                               int M, int K, int N) {
    simd_gemm(C, A, B, M, K, N);
}
#endif

