// quantize_s16 / dequantize_s16: public entries (attn/kernels_fixed.h); check
// the pointers and parameters, then run the dispatched variant. In a file
// of their own: the only float code an integer build links, and only when
// called.
#include "attn/kernels_fixed.h"
#include "kernels/kernel_table.h"
#include "kernels/quantize_io.h"

namespace attn {

Status quantize_s16(const float* x, size_t n, float scale, int32_t zero_point, int16_t* q) {
  ATTN_TRY(detail::check_quantize_io<int16_t>(x, n, scale, zero_point, q));
  if (n > 0) detail::best(detail::kQuantizeS16)(x, n, scale, zero_point, q);
  return Status::kOk;
}

Status dequantize_s16(const int16_t* q, size_t n, float scale, int32_t zero_point, float* y) {
  ATTN_TRY(detail::check_quantize_io<int16_t>(q, n, scale, zero_point, y));
  if (n > 0) detail::best(detail::kDequantizeS16)(q, n, scale, zero_point, y);
  return Status::kOk;
}

}  // namespace attn
