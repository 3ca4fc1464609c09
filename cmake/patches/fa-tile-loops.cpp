// stt-gateway (cmake/whisper-patches.cmake, fa-tile-loops): two scalar loops
// of the tiled flash attention (the encoder's), vectorised on AVX-512 and on
// AVX2. Each
// gives the same values as the loop it replaces, so the attention's results
// are bit for bit the same (test/native/fa_tiles.cpp). Inserted into
// ggml-cpu's ops.cpp ahead of ggml_compute_forward_flash_attn_ext_tiled.
#if defined(__AVX512F__)
// The largest of x[0..n): ggml_vec_max_f32 walked a row of scores one value
// at a time, each waiting on the last. A maximum is the same in any order
// (only the sign of a zero maximum could differ, and scores less a zero of
// either sign are the same numbers).
static inline float stt_fa_max(int n, const float * x) {
    __m512 m = _mm512_set1_ps(-INFINITY);
    int i = 0;
    for (; i + 16 <= n; i += 16) m = _mm512_max_ps(m, _mm512_loadu_ps(x + i));
    float r = _mm512_reduce_max_ps(m);
    for (; i < n; ++i) r = MAX(r, x[i]);
    return r;
}

// Packs the f16 keys [0, n) of the tile (key t's row at base + t*row_bytes)
// transposed into K_f32[dk*ld + t], as f32, 16 keys at a time: a gather
// reads two neighbouring dimensions of 16 keys and both are converted at
// once, where the scalar loop converted one value at a time through ggml's
// 256-KB table. Conversion from f16 is exact either way. Returns the number
// of keys packed (a multiple of 16); the caller's loop packs the rest.
static inline int stt_fa_pack_keys(const char * base, size_t row_bytes, int n, int64_t DK, float * K_f32, int ld) {
    if (DK % 2 != 0 || row_bytes > (size_t) INT32_MAX / 16) return 0;
    const __m512i offsets = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                               _mm512_set1_epi32((int) row_bytes));
    int t = 0;
    for (; t + 16 <= n; t += 16) {
        const char * rows = base + (size_t) t * row_bytes;
        for (int64_t dk = 0; dk < DK; dk += 2) {
            // dimension dk of each key in the low half of its lane, dk + 1 in the high half
            const __m512i pairs = _mm512_i32gather_epi32(offsets, rows + dk * sizeof(ggml_fp16_t), 1);
            _mm512_storeu_ps(K_f32 + dk * ld + t, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(pairs)));
            _mm512_storeu_ps(K_f32 + (dk + 1) * ld + t, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(pairs, 16))));
        }
    }
    return t;
}
#elif defined(__AVX2__) && defined(__F16C__)
// The same two loops on AVX2 (8 lanes), as above.
static inline float stt_fa_max(int n, const float * x) {
    __m256 m = _mm256_set1_ps(-INFINITY);
    int i = 0;
    for (; i + 8 <= n; i += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(x + i));
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_movehdup_ps(h));
    float r = _mm_cvtss_f32(h);
    for (; i < n; ++i) r = MAX(r, x[i]);
    return r;
}

// Packs the keys 8 at a time: 8 dimensions of each of 8 keys converted at
// once (F16C), then transposed in registers so each dimension's 8 keys are
// stored together. Conversion from f16 is exact, as the table's is.
static inline int stt_fa_pack_keys(const char * base, size_t row_bytes, int n, int64_t DK, float * K_f32, int ld) {
    if (DK % 8 != 0) return 0;
    int t = 0;
    for (; t + 8 <= n; t += 8) {
        const char * rows = base + (size_t) t * row_bytes;
        for (int64_t dk = 0; dk < DK; dk += 8) {
            __m256 r[8];  // r[k]: dimensions dk..dk+7 of key t + k
            for (int k = 0; k < 8; ++k)
                r[k] = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (rows + k * row_bytes + dk * sizeof(ggml_fp16_t))));
            const __m256 a0 = _mm256_unpacklo_ps(r[0], r[1]), a1 = _mm256_unpackhi_ps(r[0], r[1]);
            const __m256 a2 = _mm256_unpacklo_ps(r[2], r[3]), a3 = _mm256_unpackhi_ps(r[2], r[3]);
            const __m256 a4 = _mm256_unpacklo_ps(r[4], r[5]), a5 = _mm256_unpackhi_ps(r[4], r[5]);
            const __m256 a6 = _mm256_unpacklo_ps(r[6], r[7]), a7 = _mm256_unpackhi_ps(r[6], r[7]);
            const __m256 b0 = _mm256_shuffle_ps(a0, a2, _MM_SHUFFLE(1, 0, 1, 0)), b1 = _mm256_shuffle_ps(a0, a2, _MM_SHUFFLE(3, 2, 3, 2));
            const __m256 b2 = _mm256_shuffle_ps(a1, a3, _MM_SHUFFLE(1, 0, 1, 0)), b3 = _mm256_shuffle_ps(a1, a3, _MM_SHUFFLE(3, 2, 3, 2));
            const __m256 b4 = _mm256_shuffle_ps(a4, a6, _MM_SHUFFLE(1, 0, 1, 0)), b5 = _mm256_shuffle_ps(a4, a6, _MM_SHUFFLE(3, 2, 3, 2));
            const __m256 b6 = _mm256_shuffle_ps(a5, a7, _MM_SHUFFLE(1, 0, 1, 0)), b7 = _mm256_shuffle_ps(a5, a7, _MM_SHUFFLE(3, 2, 3, 2));
            // c[d]: dimension dk + d of the 8 keys
            const __m256 c[8] = {
                _mm256_permute2f128_ps(b0, b4, 0x20), _mm256_permute2f128_ps(b1, b5, 0x20),
                _mm256_permute2f128_ps(b2, b6, 0x20), _mm256_permute2f128_ps(b3, b7, 0x20),
                _mm256_permute2f128_ps(b0, b4, 0x31), _mm256_permute2f128_ps(b1, b5, 0x31),
                _mm256_permute2f128_ps(b2, b6, 0x31), _mm256_permute2f128_ps(b3, b7, 0x31),
            };
            for (int d = 0; d < 8; ++d) _mm256_storeu_ps(K_f32 + (dk + d) * ld + t, c[d]);
        }
    }
    return t;
}
#else
static inline float stt_fa_max(int n, const float * x) {
    float r;
    ggml_vec_max_f32(n, &r, x);
    return r;
}

static inline int stt_fa_pack_keys(const char *, size_t, int, int64_t, float *, int) {
    return 0;
}
#endif

