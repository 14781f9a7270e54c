// head_split_f32 / head_concat_f32: heads [H, T, d] (dense) from x [T, H * d]
// and back. Portable; pure copies over one walk of the rows.
#include "attn/kernels.h"
#include "core/check.h"

namespace attn {
namespace {

// Checks the shapes, then copy(x row t's head h, heads[h][t], d) for every
// head h and row t.
template <class X, class Heads, class Copy>
Status head_rows(Matrix<X> x, int32_t num_heads, Heads* heads, Copy copy) {
  ATTN_TRY(detail::check_view(x));  // [T, H * d]
  if (heads == nullptr) return Status::kNullArgument;
  if (num_heads <= 0 || x.cols % num_heads != 0) return Status::kBadShape;
  const int32_t d = x.cols / num_heads;
  for (int32_t h = 0; h < num_heads; ++h) {
    for (int32_t t = 0; t < x.rows; ++t)
      copy(x.row(t) + h * d, heads + (static_cast<ptrdiff_t>(h) * x.rows + t) * d, d);
  }
  return Status::kOk;
}

}  // namespace

Status head_split_f32(ConstMatF32 x, int32_t num_heads, float* heads) {
  return head_rows(x, num_heads, heads, [](const float* xr, float* hr, int32_t d) {
    for (int32_t c = 0; c < d; ++c) hr[c] = xr[c];
  });
}

Status head_concat_f32(const float* heads, int32_t num_heads, MatF32 x) {
  return head_rows(x, num_heads, heads, [](float* xr, const float* hr, int32_t d) {
    for (int32_t c = 0; c < d; ++c) xr[c] = hr[c];
  });
}

}  // namespace attn
