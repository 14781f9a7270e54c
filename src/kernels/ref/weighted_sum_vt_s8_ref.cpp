// weighted sum over transposed values, int8, probabilities from the fused
// softmax's exps, portable scalar: weighted_sum_s8_ref with V stored [d, S]
// (vt[c, j] = v[j, c], the V arena layout of the DSP targets) and
// p[t, j] = fused_prob(e[t, j], recip[t]). Same int32 sums: the same bits.
#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"

namespace attn {
namespace detail {

void weighted_sum_vt_s8_ref(ConstMatS32 e, const uint32_t* recip, ConstMatS8 vt, int32_t zv,
                            const Requant& requant, MatS8 o) {
  const int32_t m = requant.multiplier, sh = requant.shift, zo = requant.zero_point;
  for (int32_t t = 0; t < e.rows; ++t) {
    const int32_t* er = e.row(t);  // [S]
    int8_t* orow = o.row(t);       // [d]
    for (int32_t c = 0; c < vt.rows; ++c) {
      const int8_t* vc = vt.row(c);  // [S]
      int32_t acc = 0;               // |acc| <= (2^15 + S/2) * 255 < 2^31
      for (int32_t j = 0; j < e.cols; ++j) {
        acc += fused_prob(static_cast<uint32_t>(er[j]), recip[t]) * (int32_t{vc[j]} - zv);
      }
      orow[c] = static_cast<int8_t>(
          fp::clamp_i32(zo + fp::multiply_by_quantized_multiplier(acc, m, sh), -128, 127));
    }
  }
}

}  // namespace detail
}  // namespace attn
