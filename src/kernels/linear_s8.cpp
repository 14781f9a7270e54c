// linear_s8: public entry; checks views and quantization parameters, then
// runs the dispatched variant.
#include "attn/kernels_fixed.h"
#include "core/check.h"
#include "kernels/kernel_table.h"

namespace attn {

Status linear_s8(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y) {
  ATTN_TRY(detail::check_nt_product(x, w, y));  // x [M, K], w [N, K], y [M, N]
  if (p.multiplier == nullptr || p.shift == nullptr) return Status::kNullArgument;
  if (p.input_zero_point < -128 || p.input_zero_point > 127 || p.output_zero_point < -128 ||
      p.output_zero_point > 127 || p.act_min < -128 || p.act_max > 127 || p.act_min > p.act_max) {
    return Status::kBadQuantParams;
  }
  for (int32_t n = 0; n < w.rows; ++n) {
    if (p.multiplier[n] < 0 || p.shift[n] < -31 || p.shift[n] > 30) return Status::kBadQuantParams;
  }
  detail::best(detail::kLinearS8)(x, w, bias, p, y);
  return Status::kOk;
}

}  // namespace attn
