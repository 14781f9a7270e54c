// scores_f32: public entry; checks the views, then runs the dispatched variant.
// The public op takes k as [S, d], as a user holds it; forward() keeps K
// transposed and calls detail::scores_f32 directly. q k^T is the linear
// product without bias, so that variant computes it here.
#include "attn/kernels.h"
#include "internal/check.h"
#include "internal/kernels_f32.h"

namespace attn {

Status scores_f32(ConstMatF32 q, ConstMatF32 k, float scale, MatF32 s) {
  ATTN_TRY(detail::check_view(q));  // [T, d]
  ATTN_TRY(detail::check_view(k));  // [S, d]
  ATTN_TRY(detail::check_view(s));  // [T, S]
  if (k.cols != q.cols || s.rows != q.rows || s.cols != k.rows) return Status::kBadShape;
  detail::linear_f32(q, k, nullptr, s);
  for (int32_t t = 0; t < s.rows; ++t) {
    float* sr = s.row(t);  // [S]
    for (int32_t j = 0; j < s.cols; ++j) sr[j] *= scale;
  }
  return Status::kOk;
}

}  // namespace attn
