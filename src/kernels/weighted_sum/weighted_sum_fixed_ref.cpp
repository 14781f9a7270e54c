// weighted sum, int8 and int16 values, Q0.15 probabilities, portable scalar;
// one implementation for both dtypes:
//   o[t, c] = clamp(zo + requantize(sum_j p[t, j] (v[j, c] - zv), m, sh))
// clamped to the dtype's range. int8: int32 sum (|sum| <= (2^15 + S/2) * 255
// < 2^31), TFLite requantization; int16: int64 sum, CMSIS-NN 16x8
// requantization, symmetric (zero points 0). See fp::Accumulator.
#include <cstdint>

#include "attn/config.h"
#include "internal/fixed_point.h"
#include "internal/kernels_fixed.h"

namespace attn {
namespace detail {
namespace {

template <typename Act>
void weighted_sum_ref(ConstMatS16 p, Matrix<const Act> v, int32_t zv, int32_t m, int32_t sh, int32_t zo,
                      Matrix<Act> o) {
  using Acc = typename fp::Accumulator<Act>::Acc;
  constexpr int32_t kMin = fp::Accumulator<Act>::kMin, kMax = fp::Accumulator<Act>::kMax;
  for (int32_t t = 0; t < p.rows; ++t) {
    const int16_t* pr = p.row(t);  // [S]
    Act* orow = o.row(t);          // [d]
    for (int32_t c = 0; c < v.cols; ++c) {
      Acc acc = 0;
      for (int32_t j = 0; j < p.cols; ++j) acc += int32_t{pr[j]} * (int32_t{v.row(j)[c]} - zv);
      orow[c] =
          static_cast<Act>(fp::clamp_i32(zo + fp::Accumulator<Act>::requantize(acc, m, sh), kMin, kMax));
    }
  }
}

}  // namespace

#if ATTN_WITH_S8
void weighted_sum_s8_ref(ConstMatS16 p, ConstMatS8 v, int32_t zv, int32_t m, int32_t sh, int32_t zo,
                         MatS8 o) {
  weighted_sum_ref(p, v, zv, m, sh, zo, o);
}
#endif
#if ATTN_WITH_S16
void weighted_sum_s16_ref(ConstMatS16 p, ConstMatS16 v, int32_t m, int32_t sh, MatS16 o) {
  weighted_sum_ref(p, v, 0, m, sh, 0, o);
}
#endif

}  // namespace detail
}  // namespace attn
