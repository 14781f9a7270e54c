// rotary position embedding, int8 asymmetric and int16 symmetric rows,
// portable scalar, in place; one implementation for both dtypes.
//
// Row r of x [rows, heads * head_dim] sits at position pos0 + r; in each head
// the pair (i, i + head_dim/2) (HF Llama's half split) turns by the Q1.14
// cos/sin of the converter's table row:
//   a = x[i] - zp, b = x[i + h] - zp          (h = head_dim / 2; s16: zp = 0)
//   x[i]     = clamp(zp + round((a cos - b sin) / 2^14))
//   x[i + h] = clamp(zp + round((b cos + a sin) / 2^14))
// clamped to the dtype's range, with rounding half away from zero
// (fp::rotate_pair_q14, int64 products: |a cos| reaches 2^30 in s16). Exact
// integers, so every target gives the same bytes.
#include "attn/config.h"
#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"

namespace attn {
namespace detail {
namespace {

template <typename T>
void rope_rows(Matrix<T> x, int32_t head_dim, int32_t zp, int32_t pos0, const RopeTable& t) {
  constexpr int32_t kMin = fp::Accumulator<T>::kMin, kMax = fp::Accumulator<T>::kMax;
  const int32_t half = head_dim / 2;
  const int32_t heads = x.cols / head_dim;
  for (int32_t r = 0; r < x.rows; ++r) {
    const ptrdiff_t at = static_cast<ptrdiff_t>(pos0 + r) * half;
    const int16_t* cos = t.cos + at;  // [half] of position pos0 + r
    const int16_t* sin = t.sin + at;  // [half]
    for (int32_t h = 0; h < heads; ++h) {
      T* v = x.row(r) + h * head_dim;  // [head_dim]
      for (int32_t i = 0; i < half; ++i) {
        const fp::RotatedPair p =
            fp::rotate_pair_q14(int32_t{v[i]} - zp, int32_t{v[i + half]} - zp, cos[i], sin[i]);
        v[i] = static_cast<T>(fp::clamp_i32(zp + p.first, kMin, kMax));
        v[i + half] = static_cast<T>(fp::clamp_i32(zp + p.second, kMin, kMax));
      }
    }
  }
}

}  // namespace

#if ATTN_WITH_S8
void rope_s8_ref(MatS8 x, int32_t head_dim, int32_t zp, int32_t pos0, const RopeTable& t) {
  rope_rows(x, head_dim, zp, pos0, t);
}
#endif
#if ATTN_WITH_S16
void rope_s16_ref(MatS16 x, int32_t head_dim, int32_t pos0, const RopeTable& t) {
  rope_rows(x, head_dim, 0, pos0, t);
}
#endif

}  // namespace detail
}  // namespace attn
