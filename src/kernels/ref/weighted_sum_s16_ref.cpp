// weighted sum, int16 values, Q0.15 probabilities, portable scalar:
// o[t,c] = clamp(requantize_s64(sum_j p[t,j] v[j,c], m, sh), -32768, 32767).
#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"

namespace attn {
namespace detail {

void weighted_sum_s16_ref(ConstMatS16 p, ConstMatS16 v, const Requant& requant, MatS16 o) {
  const int32_t m = requant.multiplier, sh = requant.shift;
  for (int32_t t = 0; t < p.rows; ++t) {
    const int16_t* pr = p.row(t);  // [S]
    int16_t* orow = o.row(t);      // [d]
    for (int32_t c = 0; c < v.cols; ++c) {
      int64_t acc = 0;
      for (int32_t j = 0; j < p.cols; ++j) acc += int32_t{pr[j]} * int32_t{v.row(j)[c]};
      orow[c] = static_cast<int16_t>(
          fp::clamp_i32(fp::multiply_by_quantized_multiplier_s64(acc, m, sh), -32768, 32767));
    }
  }
}

}  // namespace detail
}  // namespace attn
