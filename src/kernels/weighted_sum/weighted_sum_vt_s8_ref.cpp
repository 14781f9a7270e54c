// weighted sum over transposed values, int8, Q0.15 probabilities, portable
// scalar: weighted_sum_s8_ref with V stored [d, S] (vt[c, j] = v[j, c]), the
// K/V arena layout of the DSP targets. Same int32 sums: the same bits.
#include "internal/fixed_point.h"
#include "internal/kernels_fixed.h"

namespace attn {
namespace detail {

void weighted_sum_vt_s8_ref(ConstMatS16 p, ConstMatS8 vt, int32_t zv, int32_t m, int32_t sh, int32_t zo,
                            MatS8 o) {
  for (int32_t t = 0; t < p.rows; ++t) {
    const int16_t* pr = p.row(t);  // [S]
    int8_t* orow = o.row(t);       // [d]
    for (int32_t c = 0; c < vt.rows; ++c) {
      const int8_t* vc = vt.row(c);  // [S]
      int32_t acc = 0;               // |acc| <= (2^15 + S/2) * 255 < 2^31
      for (int32_t j = 0; j < p.cols; ++j) acc += int32_t{pr[j]} * (int32_t{vc[j]} - zv);
      orow[c] = static_cast<int8_t>(
          fp::clamp_i32(zo + fp::multiply_by_quantized_multiplier(acc, m, sh), -128, 127));
    }
  }
}

}  // namespace detail
}  // namespace attn
