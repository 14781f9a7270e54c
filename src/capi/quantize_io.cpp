// quantize_io.cpp: attn_quantize_s8 / _s16 and attn_dequantize_s8 / _s16
// (attn/attn.h), the C face of attn::quantize_s8 ... (attn/kernels_fixed.h),
// alone in this file so that firmware that calls none of them links none of
// their float code.
#include "attn/attn.h"
#include "attn/config.h"
#include "attn/kernels_fixed.h"

extern "C" {

// NOLINTBEGIN(bugprone-macro-parentheses): its arguments are names and types
#define ATTN_QUANTIZE_IO(DT, T)                                                                       \
  attn_status attn_quantize_##DT(const float* x, size_t n, float scale, int32_t zero_point, T* q) {   \
    return static_cast<attn_status>(attn::quantize_##DT(x, n, scale, zero_point, q));                 \
  }                                                                                                   \
  attn_status attn_dequantize_##DT(const T* q, size_t n, float scale, int32_t zero_point, float* y) { \
    return static_cast<attn_status>(attn::dequantize_##DT(q, n, scale, zero_point, y));               \
  }
// NOLINTEND(bugprone-macro-parentheses)
#if ATTN_WITH_S8
ATTN_QUANTIZE_IO(s8, int8_t)
#endif
#if ATTN_WITH_S16
ATTN_QUANTIZE_IO(s16, int16_t)
#endif
#undef ATTN_QUANTIZE_IO

}  // extern "C"
