// rotary position embedding, int16 symmetric rows, portable scalar, in place.
//
// As rope_s8_ref with zero point 0 and the int16 range: in each head of row r
// (position pos0 + r) the pair (a, b) = (x[i], x[i + head_dim/2]) becomes
//   (clamp(round((a cos - b sin) / 2^14)), clamp(round((b cos + a sin) / 2^14)))
// rounding half away from zero, clamped to [-32768, 32767]; int64 products
// (|a cos| reaches 2^30).
#include "internal/fixed_point.h"
#include "internal/kernels_fixed.h"

namespace attn {
namespace detail {

void rope_s16_ref(MatS16 x, int32_t head_dim, int32_t pos0, const RopeTable& t) {
  const int32_t half = head_dim / 2;
  const int32_t heads = x.cols / head_dim;
  for (int32_t r = 0; r < x.rows; ++r) {
    const ptrdiff_t at = static_cast<ptrdiff_t>(pos0 + r) * half;
    const int16_t* cos = t.cos + at;  // [half] of position pos0 + r
    const int16_t* sin = t.sin + at;  // [half]
    for (int32_t h = 0; h < heads; ++h) {
      int16_t* v = x.row(r) + h * head_dim;  // [head_dim]
      for (int32_t i = 0; i < half; ++i) {
        const fp::RotatedPair p = fp::rotate_pair_q14(v[i], v[i + half], cos[i], sin[i]);
        v[i] = static_cast<int16_t>(fp::clamp_i32(p.first, -32768, 32767));
        v[i + half] = static_cast<int16_t>(fp::clamp_i32(p.second, -32768, 32767));
      }
    }
  }
}

}  // namespace detail
}  // namespace attn
