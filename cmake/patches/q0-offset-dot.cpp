    // stt-gateway (cmake/whisper-patches.cmake, q0-offset-dot): the dot
    // products of 32 signed bytes a and b in 8 lanes of 4, as
    // updot(sign(a, a), sign(b, a)) gives them: vpdpbusd multiplies unsigned
    // by signed bytes, so upstream moves a's sign onto b, two instructions
    // per row and column of a tile. With VNNI, a + 128 (a with its top bit
    // flipped) is the unsigned operand and each lane starts at -128 * sum(b),
    // so it ends at sum((a + 128) * b) - 128 * sum(b) = sum(a * b): the same
    // integers, with no saturation (vpdpbusd sums in 32 bits). Once the
    // compiler merges the repeats, b's start is made once per column and a's
    // flip once per row of a tile. The two differ only where b holds -128,
    // which upstream negates to -128 again; ggml's q8_0 quantizer writes
    // -127..127 from finite activations (test/native/q0_offset_dot.cpp).
    inline __m256 stt_dot(__m256i a, __m256i b) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
        const __m256i flip = _mm256_set1_epi8((char) 0x80);
        const __m256i start = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_dpbusd_epi32(_mm256_setzero_si256(), flip, b));
        return _mm256_cvtepi32_ps(_mm256_dpbusd_epi32(start, _mm256_xor_si256(a, flip), b));
#elif defined(__AVXVNNI__)
        const __m256i flip = _mm256_set1_epi8((char) 0x80);
        const __m256i start = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), flip, b));
        return _mm256_cvtepi32_ps(_mm256_dpbusd_avx_epi32(start, _mm256_xor_si256(a, flip), b));
#else
        return updot(_mm256_sign_epi8(a, a), _mm256_sign_epi8(b, a));
#endif
    }

