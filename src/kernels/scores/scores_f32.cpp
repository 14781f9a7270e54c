// scores_f32: public entry; checks the views, then runs the dispatched variant.
#include "attn/kernels.h"
#include "internal/check.h"
#include "internal/kernel_table.h"

namespace attn {

Status scores_f32(ConstMatF32 q, ConstMatF32 k, float scale, MatF32 s) {
  ATTN_TRY(detail::check_view(q));  // [T, d]
  ATTN_TRY(detail::check_view(k));  // [S, d]
  ATTN_TRY(detail::check_view(s));  // [T, S]
  if (k.cols != q.cols || s.rows != q.rows || s.cols != k.rows) return Status::kBadShape;
  detail::best(detail::kScoresF32)(q, k, scale, s);
  return Status::kOk;
}

}  // namespace attn
