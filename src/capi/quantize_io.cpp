// quantize_io.cpp: attn_quantize_s8 / _s16 and attn_dequantize_s8 / _s16
// (attn/attn.h), the only float code of the integer C API, alone in this
// file so that firmware that calls none of them links none of it.
#include "capi/quantize_io.h"
#include "attn/config.h"

extern "C" {

// NOLINTBEGIN(bugprone-macro-parentheses): its arguments are names and types
#define ATTN_QUANTIZE_IO(DT, T)                                                                       \
  attn_status attn_quantize_##DT(const float* x, size_t n, float scale, int32_t zero_point, T* q) {   \
    return attn::quantize_io::quantize(x, n, scale, zero_point, q);                                   \
  }                                                                                                   \
  attn_status attn_dequantize_##DT(const T* q, size_t n, float scale, int32_t zero_point, float* y) { \
    return attn::quantize_io::dequantize(q, n, scale, zero_point, y);                                 \
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
