// stt-gateway (cmake/whisper-patches.cmake, fa-rows): the flash attention of
// the decoder's few query rows (one per beam) on AVX-512, and on AVX2 with
// FMA and F16C (blocks of 8 keys instead of 16). Inserted into
// ggml-cpu's ops.cpp ahead of ggml_compute_forward_flash_attn_ext_f16_one_chunk,
// which calls it first and keeps its own path for whatever this declines.
//
// The one-row path it replaces walks the keys one at a time for each row:
// a 64-wide f16 dot product, a scalar expf, and a multiply-add into an f16
// accumulator that converts the row's whole output to f32 and back at every
// key. For a 5-beam decoder step that is 5 x 1,500 keys per head per layer,
// each converting the same f16 keys and values again. Here the keys and
// values of a block of 16 (AVX2: 8) are converted once for all the rows of a
// head in the chunk, the block's scores of a row come out of one vector, the
// softmax weights come from one vector exp, and the output accumulates in
// f32. The two instruction sets differ only in the helpers below.
//
// Same attention, other rounding: the output accumulates in f32 (the one-row
// path rounds it to f16 at every key), the dot products add in another order
// and the exponential is ggml's vector one. Checked against a
// double-precision attention by test/native/fa_rows.cpp. A row's result does
// not depend on the rows computed beside it.
#if defined(__AVX512F__) && defined(__AVX512DQ__)
#define STT_FA_ROWS_PATH 1
static constexpr int STT_FA_KEYS = 16;  // keys per block, the lanes of a vector: one vector of scores
typedef __m512 stt_fa_vec;
static inline stt_fa_vec stt_fa_load(const float * p) { return _mm512_load_ps(p); }
static inline void stt_fa_store(float * p, stt_fa_vec v) { _mm512_store_ps(p, v); }
static inline stt_fa_vec stt_fa_zero() { return _mm512_setzero_ps(); }
static inline stt_fa_vec stt_fa_set1(float x) { return _mm512_set1_ps(x); }
static inline stt_fa_vec stt_fa_fmadd(stt_fa_vec a, stt_fa_vec b, stt_fa_vec c) { return _mm512_fmadd_ps(a, b, c); }
static inline stt_fa_vec stt_fa_mul(stt_fa_vec a, stt_fa_vec b) { return _mm512_mul_ps(a, b); }
static inline stt_fa_vec stt_fa_sub(stt_fa_vec a, stt_fa_vec b) { return _mm512_sub_ps(a, b); }
static inline stt_fa_vec stt_fa_f16(const ggml_fp16_t * p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) p)); }
static inline float stt_fa_hmax(stt_fa_vec v) { return _mm512_reduce_max_ps(v); }
static inline float stt_fa_hadd(stt_fa_vec v) { return _mm512_reduce_add_ps(v); }
// lanes from `present` on: -inf
static inline stt_fa_vec stt_fa_first(stt_fa_vec v, int present) {
    return _mm512_mask_mov_ps(_mm512_set1_ps(-INFINITY), (__mmask16) ((1u << present) - 1), v);
}

// r[k] = the sum of the 16 lanes of v[k], for k = 0..15.
static inline stt_fa_vec stt_fa_sums(const stt_fa_vec v[16]) {
    __m512 c[4];
    for (int g = 0; g < 4; ++g) {
        const __m512 * w = v + 4 * g;
        // per 128-bit lane: [w0 x, w1 x, w0 y, w1 y] with x, y partial sums
        const __m512 p01 = _mm512_add_ps(_mm512_unpacklo_ps(w[0], w[1]), _mm512_unpackhi_ps(w[0], w[1]));
        const __m512 p23 = _mm512_add_ps(_mm512_unpacklo_ps(w[2], w[3]), _mm512_unpackhi_ps(w[2], w[3]));
        // per 128-bit lane: [w0, w1, w2, w3], each that lane's partial sum
        const __m512d a = _mm512_castps_pd(p01), b = _mm512_castps_pd(p23);
        c[g] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(a, b)), _mm512_castpd_ps(_mm512_unpackhi_pd(a, b)));
    }
    // add the four 128-bit lanes of each c[g]; c[g]'s keys land in lane g
    const __m512 e01 = _mm512_add_ps(_mm512_shuffle_f32x4(c[0], c[1], 0x88), _mm512_shuffle_f32x4(c[0], c[1], 0xDD));
    const __m512 e23 = _mm512_add_ps(_mm512_shuffle_f32x4(c[2], c[3], 0x88), _mm512_shuffle_f32x4(c[2], c[3], 0xDD));
    return _mm512_add_ps(_mm512_shuffle_f32x4(e01, e23, 0x88), _mm512_shuffle_f32x4(e01, e23, 0xDD));
}
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define STT_FA_ROWS_PATH 1
static constexpr int STT_FA_KEYS = 8;  // keys per block, the lanes of a vector: one vector of scores
typedef __m256 stt_fa_vec;
static inline stt_fa_vec stt_fa_load(const float * p) { return _mm256_load_ps(p); }
static inline void stt_fa_store(float * p, stt_fa_vec v) { _mm256_store_ps(p, v); }
static inline stt_fa_vec stt_fa_zero() { return _mm256_setzero_ps(); }
static inline stt_fa_vec stt_fa_set1(float x) { return _mm256_set1_ps(x); }
static inline stt_fa_vec stt_fa_fmadd(stt_fa_vec a, stt_fa_vec b, stt_fa_vec c) { return _mm256_fmadd_ps(a, b, c); }
static inline stt_fa_vec stt_fa_mul(stt_fa_vec a, stt_fa_vec b) { return _mm256_mul_ps(a, b); }
static inline stt_fa_vec stt_fa_sub(stt_fa_vec a, stt_fa_vec b) { return _mm256_sub_ps(a, b); }
static inline stt_fa_vec stt_fa_f16(const ggml_fp16_t * p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) p)); }
static inline float stt_fa_hmax(stt_fa_vec v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    return _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
}
static inline float stt_fa_hadd(stt_fa_vec v) {
    __m128 a = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    a = _mm_add_ps(a, _mm_movehl_ps(a, a));
    return _mm_cvtss_f32(_mm_add_ss(a, _mm_movehdup_ps(a)));
}
// lanes from `present` on: -inf
static inline stt_fa_vec stt_fa_first(stt_fa_vec v, int present) {
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256 keep = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(present), lanes));
    return _mm256_blendv_ps(_mm256_set1_ps(-INFINITY), v, keep);
}

// r[k] = the sum of the 8 lanes of v[k], for k = 0..7.
static inline stt_fa_vec stt_fa_sums(const stt_fa_vec v[8]) {
    // per 128-bit lane: [v0 0+1, v0 2+3, v1 0+1, v1 2+3], and so on
    const __m256 h01 = _mm256_hadd_ps(v[0], v[1]), h23 = _mm256_hadd_ps(v[2], v[3]);
    const __m256 h45 = _mm256_hadd_ps(v[4], v[5]), h67 = _mm256_hadd_ps(v[6], v[7]);
    // per 128-bit lane: [v0, v1, v2, v3] (and v4..v7), each that lane's half of the sum
    const __m256 a = _mm256_hadd_ps(h01, h23), b = _mm256_hadd_ps(h45, h67);
    return _mm256_add_ps(_mm256_permute2f128_ps(a, b, 0x20), _mm256_permute2f128_ps(a, b, 0x31));
}
#endif

#ifdef STT_FA_ROWS_PATH
static constexpr int STT_FA_ROWS = 8;   // query rows of one head taken together
static constexpr int STT_FA_DIM = 128;  // the widest head this path takes (Whisper's are 64)

// Rows [ir0, ir1) over keys [ic_start, ic_end), as
// ggml_compute_forward_flash_attn_ext_f16_one_chunk computes them. Returns
// false, having done nothing, for what it does not take: ggml's reference
// mode (use_ref), one query row (a
// greedy step: the one-row path splits its keys between the threads and was
// faster there), a mask (the self-attention's: the one-row path skips the
// masked keys one by one), sinks, other types, ALiBi, a soft cap, heads not
// a multiple of the vector's width.
static bool stt_fa_rows_chunk(
        const ggml_compute_params * params,
        ggml_tensor * dst,
        int ir0, int ir1,
        int64_t ic_start, int64_t ic_end,
        float * partials) {
    const ggml_tensor * q     = dst->src[0];
    const ggml_tensor * k     = dst->src[1];
    const ggml_tensor * v     = dst->src[2];
    float scale = 1.0f, max_bias = 0.0f, logit_softcap = 0.0f;
    memcpy(&scale,         (float *) dst->op_params + 0, sizeof(float));
    memcpy(&max_bias,      (float *) dst->op_params + 1, sizeof(float));
    memcpy(&logit_softcap, (float *) dst->op_params + 2, sizeof(float));

    const int64_t DK = k->ne[0];
    const int64_t DV = v->ne[0];
    if (params->use_ref || q->type != GGML_TYPE_F32 || k->type != GGML_TYPE_F16 || v->type != GGML_TYPE_F16 ||
        max_bias != 0.0f || logit_softcap != 0.0f ||
        DK % STT_FA_KEYS != 0 || DV % STT_FA_KEYS != 0 || DK > STT_FA_DIM || DV > STT_FA_DIM ||
        q->ne[1] < 2 || dst->src[3] || dst->src[4] || partials) {
        return false;
    }

    const int64_t neq1 = q->ne[1], neq2 = q->ne[2];
    const int64_t rk2 = neq2 / k->ne[2], rk3 = q->ne[3] / k->ne[3];
    const int64_t rv2 = neq2 / v->ne[2], rv3 = q->ne[3] / v->ne[3];

    alignas(64) float Kf[STT_FA_KEYS][STT_FA_DIM];  // the block's keys, f32
    alignas(64) float Vf[STT_FA_KEYS][STT_FA_DIM];  // the block's values, f32
    alignas(64) float Qf[STT_FA_ROWS][STT_FA_DIM];  // the rows' queries, rounded to f16 as the one-row path does
    alignas(64) float O[STT_FA_ROWS][STT_FA_DIM];   // the rows' outputs, unnormalised
    alignas(64) float P[STT_FA_KEYS];               // one row's softmax weights for the block
    float M[STT_FA_ROWS], S[STT_FA_ROWS];

    for (int ir = ir0; ir < ir1;) {
        const int iq3 = ir / (neq2 * neq1);
        const int iq2 = (ir - iq3 * neq2 * neq1) / neq1;
        const int iq1 = ir - iq3 * neq2 * neq1 - iq2 * neq1;
        // consecutive rows of one head share their keys and values
        const int n = (int) std::min<int64_t>({(int64_t) STT_FA_ROWS, (int64_t) (ir1 - ir), neq1 - iq1});

        const char * kbase = (const char *) k->data + (iq2 / rk2) * k->nb[2] + (iq3 / rk3) * k->nb[3];
        const char * vbase = (const char *) v->data + (iq2 / rv2) * v->nb[2] + (iq3 / rv3) * v->nb[3];

        for (int r = 0; r < n; ++r) {
            const float * pq = (const float *) ((const char *) q->data + (iq1 + r) * q->nb[1] + iq2 * q->nb[2] + iq3 * q->nb[3]);
            for (int64_t d = 0; d < DK; ++d) Qf[r][d] = GGML_CPU_FP16_TO_FP32(GGML_CPU_FP32_TO_FP16(pq[d]));
            memset(O[r], 0, DV * sizeof(float));
            M[r] = -INFINITY;
            S[r] = 0.0f;
        }

        for (int64_t ic = ic_start; ic < ic_end; ic += STT_FA_KEYS) {
            const int nk = (int) std::min<int64_t>(STT_FA_KEYS, ic_end - ic);
            for (int t = 0; t < STT_FA_KEYS; ++t) {
                if (t < nk) {
                    const ggml_fp16_t * kr = (const ggml_fp16_t *) (kbase + (ic + t) * k->nb[1]);
                    const ggml_fp16_t * vr = (const ggml_fp16_t *) (vbase + (ic + t) * v->nb[1]);
                    for (int64_t d = 0; d < DK; d += STT_FA_KEYS) stt_fa_store(&Kf[t][d], stt_fa_f16(kr + d));
                    for (int64_t d = 0; d < DV; d += STT_FA_KEYS) stt_fa_store(&Vf[t][d], stt_fa_f16(vr + d));
                } else {
                    // past the last key: zeros, so that a zero weight adds nothing
                    memset(Kf[t], 0, DK * sizeof(float));
                    memset(Vf[t], 0, DV * sizeof(float));
                }
            }
            for (int r = 0; r < n; ++r) {
                stt_fa_vec acc[STT_FA_KEYS];
                for (int t = 0; t < STT_FA_KEYS; ++t) acc[t] = stt_fa_zero();
                for (int64_t d = 0; d < DK; d += STT_FA_KEYS) {
                    const stt_fa_vec qv = stt_fa_load(&Qf[r][d]);
                    for (int t = 0; t < STT_FA_KEYS; ++t) acc[t] = stt_fa_fmadd(qv, stt_fa_load(&Kf[t][d]), acc[t]);
                }
                // keys past the last score -inf
                const stt_fa_vec s = stt_fa_first(stt_fa_mul(stt_fa_sums(acc), stt_fa_set1(scale)), nk);
                const float Mnew = std::max(M[r], stt_fa_hmax(s));
                if (Mnew > M[r]) {
                    const float ms = expf(M[r] - Mnew);
                    for (int64_t d = 0; d < DV; d += STT_FA_KEYS) stt_fa_store(&O[r][d], stt_fa_mul(stt_fa_load(&O[r][d]), stt_fa_set1(ms)));
                    S[r] *= ms;
                    M[r] = Mnew;
                }
                // exp(-inf - M) is 0: keys past the last weigh nothing
                const stt_fa_vec p = ggml_v_expf(stt_fa_sub(s, stt_fa_set1(Mnew)));
                S[r] += stt_fa_hadd(p);
                stt_fa_store(P, p);
                for (int64_t d = 0; d < DV; d += STT_FA_KEYS) {
                    stt_fa_vec o = stt_fa_load(&O[r][d]);
                    for (int t = 0; t < STT_FA_KEYS; ++t) o = stt_fa_fmadd(stt_fa_set1(P[t]), stt_fa_load(&Vf[t][d]), o);
                    stt_fa_store(&O[r][d], o);
                }
            }
        }

        for (int r = 0; r < n; ++r) {
            const float S_inv = S[r] == 0.0f ? 0.0f : 1.0f / S[r];
            ggml_vec_scale_f32(DV, O[r], S_inv);
            // permute(0, 2, 1, 3), as the one-row path
            memcpy((char *) dst->data + (iq3 * dst->ne[2] * dst->ne[1] + iq2 + (iq1 + r) * dst->ne[1]) * dst->nb[1], O[r], dst->nb[1]);
        }
        ir += n;
    }
    return true;
}
#else
static bool stt_fa_rows_chunk(const ggml_compute_params *, ggml_tensor *, int, int, int64_t, int64_t, float *) {
    return false;
}
#endif

