    // stt-gateway (cmake/whisper-patches.cmake, q0-row-panels). Without
    // VNNI, a q8_0 dot product of 32 bytes costs the tiles above three
    // instructions (sign, vpmaddubsw, vpmaddwd) and then three more to turn
    // its 8 lanes into floats and scale them (convert, broadcast the scale,
    // multiply-add), for each block of each row and column. Here a job is a
    // panel of 8 rows across all columns: its weights are laid out once,
    // block by block, with the 8 rows in the 8 lanes (4 bytes of each row per
    // lane), so a column's 4 bytes are broadcast to all rows and each block's
    // sums stay whole in 32 bits: one conversion and one multiply-add per
    // block of 8 rows. The integer sums and the scales' products are exact,
    // and each block's scaled sum is added with one rounding (a fused
    // multiply-add), where upstream rounds every lane of every block and then
    // adds the lanes; so the results differ from upstream's in their last
    // bits (test/native/q0_row_panels.cpp: bit for bit against a scalar copy
    // of this arithmetic, and within f32 roundings of exact arithmetic).
#if STT_Q0_ROW_PANELS == 8
    static constexpr int64_t stt_panel_rows = 8;
    static constexpr int64_t stt_panel_min_columns = 16;  // fewer: laying out the panel costs more than it saves
    struct alignas(32) stt_panel_block {
        __m256i signs[8];  // group g: bytes 4g..4g+3 of each row, row i in lane i
        __m256i sizes[8];  // their absolute values, vpmaddubsw's unsigned operand
        float d[8];        // each row's scale
    };

    NOINLINE void stt_gemm_panels(int64_t m0, int64_t m, int64_t n0, int64_t n) {
        stt_for_each_panel(m0, m, [&](const stt_panel_block * panel, int64_t ii) {
            int64_t jj = n0;
            for (; jj + 4 <= n; jj += 4)
                stt_panel_tile<4>(panel, ii, jj);
            switch (n - jj) {
            case 3: stt_panel_tile<3>(panel, ii, jj); break;
            case 2: stt_panel_tile<2>(panel, ii, jj); break;
            case 1: stt_panel_tile<1>(panel, ii, jj); break;
            }
        });
    }

    // Rows ii..ii+7, block by block: an 8 x 8 transpose of 4-byte groups.
    inline void stt_lay_out_panel(stt_panel_block * panel, int64_t ii) {
        for (int64_t l = 0; l < k; ++l) {
            __m256i r[8];
            for (int i = 0; i < 8; ++i) {
                r[i] = load(A + lda * (ii + i) + l);
                panel[l].d[i] = unhalf(A[lda * (ii + i) + l].d);
            }
            __m256i t[8], u[8];
            for (int i = 0; i < 8; i += 2) {
                t[i] = _mm256_unpacklo_epi32(r[i], r[i + 1]);
                t[i + 1] = _mm256_unpackhi_epi32(r[i], r[i + 1]);
            }
            for (int i = 0; i < 8; i += 4) {
                u[i] = _mm256_unpacklo_epi64(t[i], t[i + 2]);
                u[i + 1] = _mm256_unpackhi_epi64(t[i], t[i + 2]);
                u[i + 2] = _mm256_unpacklo_epi64(t[i + 1], t[i + 3]);
                u[i + 3] = _mm256_unpackhi_epi64(t[i + 1], t[i + 3]);
            }
            for (int g = 0; g < 4; ++g) {
                const __m256i low = _mm256_permute2x128_si256(u[g], u[g + 4], 0x20);
                const __m256i high = _mm256_permute2x128_si256(u[g], u[g + 4], 0x31);
                panel[l].signs[g] = low;
                panel[l].signs[g + 4] = high;
                panel[l].sizes[g] = _mm256_sign_epi8(low, low);
                panel[l].sizes[g + 4] = _mm256_sign_epi8(high, high);
            }
        }
    }

    template <int RN>
    inline void stt_panel_tile(const stt_panel_block * panel, int64_t ii, int64_t jj) {
        const __m256i ones = _mm256_set1_epi16(1);
        __m256 acc[RN] = {};
        for (int64_t l = 0; l < k; ++l) {
            __m256i sums[RN] = {};
            // Two groups per iteration, each group's signs and sizes held in
            // registers: GCC otherwise unrolls all 8 groups, interleaves them
            // and spills the partial sums to the stack (53 spills in
            // stt_gemm_panels, where this tile is inlined), and folds the
            // signs' load into every column's vpsignb. The integer sums are
            // the same in any order. (GNU compilers only: MSVC has no
            // inline assembly on x64 and ignores the pragma.)
#if defined(__GNUC__)
#pragma GCC unroll 2
#endif
            for (int g = 0; g < 8; ++g) {
                __m256i signs = panel[l].signs[g];
                __m256i sizes = panel[l].sizes[g];
#if defined(__GNUC__)
                __asm__("" : "+x"(signs), "+x"(sizes));
#endif
                for (int j = 0; j < RN; ++j) {
                    int32_t four;
                    std::memcpy(&four, B[ldb * (jj + j) + l].qs + 4 * g, sizeof four);
                    const __m256i b = _mm256_sign_epi8(_mm256_set1_epi32(four), signs);
                    sums[j] = _mm256_add_epi32(sums[j], _mm256_madd_epi16(ones, _mm256_maddubs_epi16(sizes, b)));
                }
            }
            const __m256 da = _mm256_load_ps(panel[l].d);
            for (int j = 0; j < RN; ++j)
                acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums[j]),
                                         _mm256_mul_ps(da, _mm256_set1_ps(unhalf(B[ldb * (jj + j) + l].d))), acc[j]);
        }
        for (int j = 0; j < RN; ++j)
            _mm256_storeu_ps(C + ldc * (jj + j) + ii, acc[j]);
    }
#elif STT_Q0_ROW_PANELS == 16
    // On AVX-512 with VNNI the same arithmetic in 16-row panels: one
    // vpdpbusd multiplies and sums a column's 4 bytes with 4 bytes of each
    // of 16 rows, where q0-offset-dot's 4-row tiles spend a vpdpbusd, a
    // conversion and a multiply-add on 8 lanes of one row and one column per
    // block, and a horizontal sum per output. vpdpbusd's first operand is
    // unsigned: the weights are laid out with their top bit flipped (a + 128)
    // and each column's block starts at -128 * sum(b), as in q0-offset-dot,
    // so every block's integer sum is exact and the results are the 8-row
    // panels' bits (the same scalar copy checks both).
    static constexpr int64_t stt_panel_rows = 16;
    static constexpr int64_t stt_panel_min_columns = 16;  // fewer: laying out the panel costs more than it saves
    struct alignas(64) stt_panel_block {
        uint32_t flipped[8][16];  // group g: bytes 4g..4g+3 of row i, plus 128, in lane i
        float d[16];              // each row's scale
    };
    struct stt_column_block {
        int32_t start;  // -128 * sum(b): vpdpbusd's lane start, for a + 128
        float d;        // the column's scale
    };

    NOINLINE void stt_gemm_panels(int64_t m0, int64_t m, int64_t n0, int64_t n) {
        // The columns' block starts and scales, per thread, reused from product to product.
        thread_local std::vector<stt_column_block> columns;
        const int64_t cols = n - n0;
        if ((int64_t) columns.size() < cols * k)
            columns.resize(cols * k);
        // Block by block, then column by column (a tile reads one stream):
        // -128 * sum(b), where vpsadbw sums b + 128 in four groups of 8
        // unsigned bytes, and the column's scale as a float.
        const __m256i flip = _mm256_set1_epi8((char) 0x80);
        for (int64_t l = 0; l < k; ++l)
            for (int64_t j = 0; j < cols; ++j) {
                const block_q8_0 * b = B + ldb * (n0 + j) + l;
                const __m256i sad = _mm256_sad_epu8(_mm256_xor_si256(load(b), flip), _mm256_setzero_si256());
                const __m128i two = _mm_add_epi64(_mm256_castsi256_si128(sad), _mm256_extracti128_si256(sad, 1));
                const int64_t biased = _mm_cvtsi128_si64(two) + _mm_extract_epi64(two, 1);
                columns[l * cols + j] = {int32_t(-128 * (biased - 32 * 128)), unhalf(b->d)};
            }
        stt_for_each_panel(m0, m, [&](const stt_panel_block * panel, int64_t ii) {
            int64_t jj = n0;
            for (; jj + 8 <= n; jj += 8)
                stt_panel_tile<8>(panel, columns.data() + (jj - n0), cols, ii, jj);
            if (jj + 4 <= n) {
                stt_panel_tile<4>(panel, columns.data() + (jj - n0), cols, ii, jj);
                jj += 4;
            }
            switch (n - jj) {
            case 3: stt_panel_tile<3>(panel, columns.data() + (jj - n0), cols, ii, jj); break;
            case 2: stt_panel_tile<2>(panel, columns.data() + (jj - n0), cols, ii, jj); break;
            case 1: stt_panel_tile<1>(panel, columns.data() + (jj - n0), cols, ii, jj); break;
            }
        });
    }

    // Rows ii..ii+15, block by block: 4-byte group g of row i to lane i of group g.
    inline void stt_lay_out_panel(stt_panel_block * panel, int64_t ii) {
        for (int64_t l = 0; l < k; ++l)
            for (int i = 0; i < 16; ++i) {
                const block_q8_0 & a = A[lda * (ii + i) + l];
                panel[l].d[i] = unhalf(a.d);
                for (int g = 0; g < 8; ++g) {
                    uint32_t four;
                    std::memcpy(&four, a.qs + 4 * g, sizeof four);
                    panel[l].flipped[g][i] = four ^ 0x80808080u;
                }
            }
    }

    // Columns jj..jj+RN-1 against the panel; `column` is column jj's in block 0, `cols` the stride of a block.
    template <int RN>
    inline void stt_panel_tile(const stt_panel_block * panel, const stt_column_block * column, int64_t cols, int64_t ii, int64_t jj) {
        __m512 acc[RN];
        for (int j = 0; j < RN; ++j)
            acc[j] = _mm512_setzero_ps();
        for (int64_t l = 0; l < k; ++l, column += cols) {
            __m512i sums[RN];
            for (int j = 0; j < RN; ++j)
                sums[j] = _mm512_set1_epi32(column[j].start);
            for (int g = 0; g < 8; ++g) {
                const __m512i a = _mm512_load_si512(panel[l].flipped[g]);
                for (int j = 0; j < RN; ++j) {
                    int32_t four;
                    std::memcpy(&four, B[ldb * (jj + j) + l].qs + 4 * g, sizeof four);
                    sums[j] = _mm512_dpbusd_epi32(sums[j], a, _mm512_set1_epi32(four));
                }
            }
            const __m512 da = _mm512_load_ps(panel[l].d);
            for (int j = 0; j < RN; ++j)
                acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sums[j]),
                                         _mm512_mul_ps(da, _mm512_set1_ps(column[j].d)), acc[j]);
        }
        for (int j = 0; j < RN; ++j)
            _mm512_storeu_ps(C + ldc * (jj + j) + ii, acc[j]);
    }
#endif
#if STT_Q0_ROW_PANELS
    // Both heights: this thread's share of the panels of rows m0..m (its
    // fixed range, or chunks from the pool's counter: shared-q0-tiles), each
    // laid out in this thread's panel, reused from product to product, and
    // handed to `tiles_of_panel(panel, ii)` for the columns.
    template <typename Tiles>
    inline void stt_for_each_panel(int64_t m0, int64_t m, Tiles && tiles_of_panel) {
        const int64_t tiles = (m - m0) / stt_panel_rows;
        const int64_t duty = (tiles + nth - 1) / nth;
        const int64_t start = duty * ith;
        const int64_t end = std::min(start + duty, tiles);
        thread_local std::vector<stt_panel_block> panel;
        if ((int64_t) panel.size() < k)
            panel.resize(k);
        stt_tiles_begin(tiles, start, end);
        for (int64_t lo, hi; stt_tiles_next(lo, hi);)
            for (int64_t job = lo; job < hi; ++job) {
                const int64_t ii = m0 + job * stt_panel_rows;
                stt_lay_out_panel(panel.data(), ii);
                tiles_of_panel(panel.data(), ii);
            }
    }
#endif
