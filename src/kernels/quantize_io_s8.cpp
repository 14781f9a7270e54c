// quantize_s8 / dequantize_s8: public entries (attn/kernels_fixed.h); check
// the pointers and parameters, then run the dispatched variant. In a file
// of their own: the only float code an integer build links, and only when
// called.
#include "attn/kernels_fixed.h"
#include "kernels/kernel_table.h"
#include "kernels/quantize_io.h"

namespace attn {

Status quantize_s8(const float* x, size_t n, float scale, int32_t zero_point, int8_t* q) {
  ATTN_TRY(detail::check_quantize_io<int8_t>(x, n, scale, zero_point, q));
  if (n > 0) detail::best(detail::kQuantizeS8)(x, n, scale, zero_point, q);
  return Status::kOk;
}

Status dequantize_s8(const int8_t* q, size_t n, float scale, int32_t zero_point, float* y) {
  ATTN_TRY(detail::check_quantize_io<int8_t>(q, n, scale, zero_point, y));
  if (n > 0) detail::best(detail::kDequantizeS8)(q, n, scale, zero_point, y);
  return Status::kOk;
}

}  // namespace attn
