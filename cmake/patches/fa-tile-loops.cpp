// stt-gateway (cmake/whisper-patches.cmake, fa-tile-loops): two scalar loops
// of the tiled flash attention (the encoder's), vectorised on AVX-512. Each
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

