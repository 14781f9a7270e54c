// weighted_sum_f32: public entry; checks the views, then runs the dispatched variant.
#include "attn/kernels.h"
#include "core/check.h"
#include "kernels/kernel_table.h"

namespace attn {

Status weighted_sum_f32(ConstMatF32 p, ConstMatF32 v, MatF32 o) {
  ATTN_TRY(detail::check_view(p));  // [T, S]
  ATTN_TRY(detail::check_view(v));  // [S, d]
  ATTN_TRY(detail::check_view(o));  // [T, d]
  if (v.rows != p.cols || o.rows != p.rows || o.cols != v.cols) return Status::kBadShape;
  detail::best(detail::kWeightedSumF32)(p, v, o);
  return Status::kOk;
}

}  // namespace attn
