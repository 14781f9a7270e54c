// softmax_s8: public entry; checks views and parameters, then runs the
// dispatched variant.
#include "attn/kernels_fixed.h"
#include "core/check.h"
#include "kernels/kernel_table.h"

namespace attn {

Status softmax_s8(ConstMatS8 x, const SoftmaxS8Params& p, MatS8 y) {
  ATTN_TRY(detail::check_view(x));  // [M, N]
  ATTN_TRY(detail::check_view(y));  // [M, N]
  // N <= 4095 keeps the Q12.19 sum of exps below 2^31.
  if (y.rows != x.rows || y.cols != x.cols || x.cols > 4095) return Status::kBadShape;
  // In place only on the very same view: a shifted overlap would read written outputs.
  if (static_cast<const void*>(y.data) == static_cast<const void*>(x.data) && y.stride != x.stride) {
    return Status::kBadShape;
  }
  if (p.input_multiplier <= 0 || p.input_left_shift < 0 || p.input_left_shift > 31 || p.diff_min > 0) {
    return Status::kBadQuantParams;
  }
  detail::softmax_s8_ref(x, p, y);
  return Status::kOk;
}

}  // namespace attn
