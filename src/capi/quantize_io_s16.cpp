// quantize_io_s16.cpp: attn_quantize_s16 and attn_dequantize_s16 (attn/attn.h), the
// only float code of the s16 C API, alone in this file so that firmware that
// does not call them links none of it.
#include "internal/quantize_io.h"

extern "C" {

attn_status attn_quantize_s16(const float* x, size_t n, float scale, int32_t zero_point, int16_t* q) {
  return attn::quantize_io::quantize(x, n, scale, zero_point, q);
}

attn_status attn_dequantize_s16(const int16_t* q, size_t n, float scale, int32_t zero_point, float* y) {
  return attn::quantize_io::dequantize(q, n, scale, zero_point, y);
}

}  // extern "C"
