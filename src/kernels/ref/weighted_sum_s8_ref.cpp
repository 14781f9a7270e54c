// weighted sum, int8 values, Q0.15 probabilities, portable scalar:
// o[t,c] = clamp(zo + MBQM(sum_j p[t,j] (v[j,c] - zv), m, sh), -128, 127).
#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"

namespace attn {
namespace detail {

void weighted_sum_s8_ref(ConstMatS16 p, ConstMatS8 v, int32_t zv, const Requant& requant, MatS8 o) {
  const int32_t m = requant.multiplier, sh = requant.shift, zo = requant.zero_point;
  for (int32_t t = 0; t < p.rows; ++t) {
    const int16_t* pr = p.row(t);  // [S]
    int8_t* orow = o.row(t);       // [d]
    for (int32_t c = 0; c < v.cols; ++c) {
      int32_t acc = 0;  // |acc| <= (2^15 + S/2) * 255 < 2^31
      for (int32_t j = 0; j < p.cols; ++j) acc += int32_t{pr[j]} * (int32_t{v.row(j)[c]} - zv);
      orow[c] = static_cast<int8_t>(
          fp::clamp_i32(zo + fp::multiply_by_quantized_multiplier(acc, m, sh), -128, 127));
    }
  }
}

}  // namespace detail
}  // namespace attn
