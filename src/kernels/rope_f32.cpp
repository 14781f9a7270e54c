// rope_f32: public entry; checks the arguments, then rotates in place.
#include <cmath>

#include "attn/kernels.h"
#include "core/check.h"
#include "kernels/kernel_table.h"

namespace attn {

Status rope_f32(MatF32 x, int32_t head_dim, int32_t pos0, float base) {
  ATTN_TRY(detail::check_view(x));  // [n, heads * head_dim]
  if (head_dim <= 0 || head_dim % 2 != 0 || x.cols % head_dim != 0) return Status::kBadShape;
  if (!(base > 0.0f) || !std::isfinite(base)) return Status::kBadRope;
  if (pos0 < 0) return Status::kBadPosition;
  detail::rope_f32_ref(x, head_dim, pos0, base);
  return Status::kOk;
}

}  // namespace attn
