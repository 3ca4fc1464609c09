// stt-gateway (cmake/whisper-patches.cmake, gelu-vector-table): ggml's GELU
// (GGML_GELU_FP16) looks each value up in a 65,536-entry f16 table, one value
// at a time with two conversions and two branches each. On AVX-512 this
// takes 16 values at a time (on AVX2, 8): the same conversion to f16 (round to nearest
// even), a gather from the same table, the same cut-offs at -10 and 10. The
// results are bit for bit the same for every number (a NaN stays a NaN).
// Inserted into ggml-cpu's ops.cpp ahead of ggml_compute_forward_gelu_f32,
// which calls it instead of ggml_vec_gelu_f32.
static void stt_vec_gelu_f32(const int n, float * y, const float * x) {
    int i = 0;
#if defined(__AVX512F__) && defined(GGML_GELU_FP16)
    for (; i + 16 <= n; i += 16) {
        const __m512 xv = _mm512_loadu_ps(x + i);
        const __m256i h = _mm512_cvtps_ph(xv, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        // Each lane reads 4 bytes (its entry and the next); 0xFFFF, a NaN,
        // would read past the table, so it reads 0xFFFE, a NaN too.
        const __m512i index = _mm512_min_epu32(_mm512_cvtepu16_epi32(h), _mm512_set1_epi32(0xFFFE));
        const __m512i entries = _mm512_i32gather_epi32(index, (const void *) ggml_table_gelu_f16, 2);
        __m512 yv = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(entries));
        yv = _mm512_mask_mov_ps(yv, _mm512_cmp_ps_mask(xv, _mm512_set1_ps(10.0f), _CMP_GE_OQ), xv);
        yv = _mm512_mask_mov_ps(yv, _mm512_cmp_ps_mask(xv, _mm512_set1_ps(-10.0f), _CMP_LE_OQ), _mm512_setzero_ps());
        _mm512_storeu_ps(y + i, yv);
    }
#elif defined(__AVX2__) && defined(__F16C__) && defined(GGML_GELU_FP16)
    // The same on AVX2, 8 values at a time.
    for (; i + 8 <= n; i += 8) {
        const __m256 xv = _mm256_loadu_ps(x + i);
        const __m128i h = _mm256_cvtps_ph(xv, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __m256i index = _mm256_min_epu32(_mm256_cvtepu16_epi32(h), _mm256_set1_epi32(0xFFFE));
        const __m256i entries = _mm256_and_si256(_mm256_i32gather_epi32((const int *) ggml_table_gelu_f16, index, 2), _mm256_set1_epi32(0xFFFF));
        // 8 entries to 8 f16: packed within each 128-bit half, then the halves' low quarters joined
        const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(entries, entries), _MM_SHUFFLE(3, 1, 2, 0));
        __m256 yv = _mm256_cvtph_ps(_mm256_castsi256_si128(packed));
        yv = _mm256_blendv_ps(yv, xv, _mm256_cmp_ps(xv, _mm256_set1_ps(10.0f), _CMP_GE_OQ));
        yv = _mm256_blendv_ps(yv, _mm256_setzero_ps(), _mm256_cmp_ps(xv, _mm256_set1_ps(-10.0f), _CMP_LE_OQ));
        _mm256_storeu_ps(y + i, yv);
    }
#endif
    ggml_vec_gelu_f32(n - i, y + i, x + i);
}

