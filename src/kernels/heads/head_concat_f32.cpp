// head_concat_f32: x [T, H * d] from heads [H, T, d] (dense). Portable; a pure copy.
#include "attn/kernels.h"
#include "internal/check.h"

namespace attn {

Status head_concat_f32(const float* heads, int32_t num_heads, MatF32 x) {
  ATTN_TRY(detail::check_view(x));  // [T, H * d]
  if (heads == nullptr) return Status::kNullArgument;
  if (num_heads <= 0 || x.cols % num_heads != 0) return Status::kBadShape;
  const int32_t d = x.cols / num_heads;
  for (int32_t h = 0; h < num_heads; ++h) {
    for (int32_t t = 0; t < x.rows; ++t) {
      const float* src = heads + (static_cast<ptrdiff_t>(h) * x.rows + t) * d;  // [d]
      float* dst = x.row(t) + h * d;                                            // [d]
      for (int32_t c = 0; c < d; ++c) dst[c] = src[c];
    }
  }
  return Status::kOk;
}

}  // namespace attn
