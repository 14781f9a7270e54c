// linear_s16: public entry; checks views and quantization parameters, then
// runs the dispatched variant.
#include "attn/kernels_fixed.h"
#include "core/check.h"
#include "kernels/kernel_table.h"

namespace attn {

Status linear_s16(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const LinearS16Params& p, MatS16 y) {
  ATTN_TRY(detail::check_nt_product(x, w, y));  // x [M, K], w [N, K], y [M, N]
  if (p.multiplier == nullptr || p.shift == nullptr) return Status::kNullArgument;
  if (p.act_min < -32768 || p.act_max > 32767 || p.act_min > p.act_max) return Status::kBadQuantParams;
  for (int32_t n = 0; n < w.rows; ++n) {
    if (p.multiplier[n] < 0 || p.shift[n] < -31 || p.shift[n] > 14) return Status::kBadQuantParams;
  }
  detail::best(detail::kLinearS16)(x, w, bias, p, y);
  return Status::kOk;
}

}  // namespace attn
