// quantize_io.cpp: attn_quantize_s8 / _s16 and attn_dequantize_s8 / _s16
// (attn/attn.h), the only float code of the integer C API, alone in this
// file so that firmware that calls none of them links none of it.
#include "attn/config.h"
#include "internal/quantize_io.h"

extern "C" {

#if ATTN_WITH_S8
attn_status attn_quantize_s8(const float* x, size_t n, float scale, int32_t zero_point, int8_t* q) {
  return attn::quantize_io::quantize(x, n, scale, zero_point, q);
}
attn_status attn_dequantize_s8(const int8_t* q, size_t n, float scale, int32_t zero_point, float* y) {
  return attn::quantize_io::dequantize(q, n, scale, zero_point, y);
}
#endif

#if ATTN_WITH_S16
attn_status attn_quantize_s16(const float* x, size_t n, float scale, int32_t zero_point, int16_t* q) {
  return attn::quantize_io::quantize(x, n, scale, zero_point, q);
}
attn_status attn_dequantize_s16(const int16_t* q, size_t n, float scale, int32_t zero_point, float* y) {
  return attn::quantize_io::dequantize(q, n, scale, zero_point, y);
}
#endif

}  // extern "C"
