// stt-gateway (cmake/whisper-patches.cmake, f16c-conversions): ggml-cpu
// converts one f32 to f16 in software (ggml_compute_fp32_to_fp16, a dozen
// instructions and a branch) wherever its own macro is not set, which on x86
// is everywhere: simd-mappings.h defines the F16C instruction but does not
// use it. The encoder's K/V copies to f16 (ggml_cpy, each layer and the
// cross-attention cache) and the convolutions' im2col went through it one
// value at a time. With F16C: one vcvtps2ph per value, and whole rows where
// a copy's rows are contiguous. Both round to nearest even, as the software
// does, so every finite value and infinity converts to the same bits
// (test/native/f16c_conversions.cpp).
#if defined(__F16C__) && !defined(_MSC_VER)
#undef GGML_CPU_FP32_TO_FP16
#define GGML_CPU_FP32_TO_FP16(x) _cvtss_sh((x), 0)
#endif

template <typename T> static inline T stt_from_f32(float x) {
    return type_conversion_table<T>::from_f32(x);
}
#if defined(__F16C__) && !defined(_MSC_VER)
template <> inline ggml_fp16_t stt_from_f32<ggml_fp16_t>(float x) {
    return _cvtss_sh(x, 0);
}
#endif

// A contiguous row of f32 to f16 (ggml_cpu_fp32_to_fp16: 8 or 16 at a time with F16C); false for other types.
template <typename src_t, typename dst_t> static inline bool stt_convert_row(const src_t * src, dst_t * dst, int64_t n) {
#if defined(__F16C__)
    if constexpr (std::is_same_v<src_t, float> && std::is_same_v<dst_t, ggml_fp16_t>) {
        ggml_cpu_fp32_to_fp16(src, dst, n);
        return true;
    }
#endif
    (void) src; (void) dst; (void) n;
    return false;
}

