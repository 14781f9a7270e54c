// head_split_f32: heads [H, T, d] (dense) from x [T, H * d]. Portable; a pure copy.
#include "attn/kernels.h"
#include "internal/check.h"

namespace attn {

Status head_split_f32(ConstMatF32 x, int32_t num_heads, float* heads) {
  ATTN_TRY(detail::check_view(x));  // [T, H * d]
  if (heads == nullptr) return Status::kNullArgument;
  if (num_heads <= 0 || x.cols % num_heads != 0) return Status::kBadShape;
  const int32_t d = x.cols / num_heads;
  for (int32_t h = 0; h < num_heads; ++h) {
    for (int32_t t = 0; t < x.rows; ++t) {
      const float* src = x.row(t) + h * d;                                // [d]
      float* dst = heads + (static_cast<ptrdiff_t>(h) * x.rows + t) * d;  // [d]
      for (int32_t c = 0; c < d; ++c) dst[c] = src[c];
    }
  }
  return Status::kOk;
}

}  // namespace attn
