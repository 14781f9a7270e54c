// scores_f32: public entry; checks the views, then runs the dispatched variant.
#include "attn/kernels.h"
#include "core/check.h"
#include "kernels/kernel_table.h"

namespace attn {

Status scores_f32(ConstMatF32 q, ConstMatF32 k, float scale, MatF32 s) {
  ATTN_TRY(detail::check_nt_product(q, k, s));  // q [T, d], k [S, d], s [T, S]
  detail::best(detail::kScoresF32)(q, k, scale, s);
  return Status::kOk;
}

}  // namespace attn
