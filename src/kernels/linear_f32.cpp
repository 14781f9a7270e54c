// linear_f32: public entry; checks the views, then runs the dispatched variant.
#include "attn/kernels.h"
#include "core/check.h"
#include "kernels/kernel_table.h"

namespace attn {

Status linear_f32(ConstMatF32 x, ConstMatF32 w, const float* bias, MatF32 y) {
  ATTN_TRY(detail::check_nt_product(x, w, y));  // x [M, K], w [N, K], y [M, N]
  detail::best(detail::kLinearF32)(x, w, bias, y);
  return Status::kOk;
}

}  // namespace attn
