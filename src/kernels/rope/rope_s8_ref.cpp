// rotary position embedding, int8 asymmetric rows, portable scalar, in place.
//
// Row r of x [rows, heads * head_dim] sits at position pos0 + r; in each head
// the pair (i, i + head_dim/2) (HF Llama's half split) turns by the Q1.14
// cos/sin of the converter's table row:
//   a = x[i] - zp, b = x[i + h] - zp          (h = head_dim / 2)
//   x[i]     = clamp(zp + round((a cos - b sin) / 2^14), -128, 127)
//   x[i + h] = clamp(zp + round((b cos + a sin) / 2^14), -128, 127)
// with rounding half away from zero (fp::rotate_pair_q14). Exact integers, so
// every target gives the same bytes.
#include "internal/fixed_point.h"
#include "internal/kernels_fixed.h"

namespace attn {
namespace detail {

void rope_s8_ref(MatS8 x, int32_t head_dim, int32_t zp, int32_t pos0, const RopeTable& t) {
  const int32_t half = head_dim / 2;
  const int32_t heads = x.cols / head_dim;
  for (int32_t r = 0; r < x.rows; ++r) {
    const ptrdiff_t at = static_cast<ptrdiff_t>(pos0 + r) * half;
    const int16_t* cos = t.cos + at;  // [half] of position pos0 + r
    const int16_t* sin = t.sin + at;  // [half]
    for (int32_t h = 0; h < heads; ++h) {
      int8_t* v = x.row(r) + h * head_dim;  // [head_dim]
      for (int32_t i = 0; i < half; ++i) {
        const fp::RotatedPair p =
            fp::rotate_pair_q14(int32_t{v[i]} - zp, int32_t{v[i + half]} - zp, cos[i], sin[i]);
        v[i] = static_cast<int8_t>(fp::clamp_i32(zp + p.first, -128, 127));
        v[i + half] = static_cast<int8_t>(fp::clamp_i32(zp + p.second, -128, 127));
      }
    }
  }
}

}  // namespace detail
}  // namespace attn
