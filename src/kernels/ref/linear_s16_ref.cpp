// linear, int16 activations x int8 weights, portable scalar: CMSIS-NN 16x8
// (arm_fully_connected_s16) arithmetic, 64-bit accumulation.
#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"

namespace attn {
namespace detail {

void linear_s16_ref(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const LinearS16Params& p, MatS16 y) {
  for (int32_t m = 0; m < x.rows; ++m) {
    const int16_t* xr = x.row(m);  // [K]
    int16_t* yr = y.row(m);        // [N]
    for (int32_t n = 0; n < w.rows; ++n) {
      const int8_t* wr = w.row(n);  // [K]
      int64_t acc = bias != nullptr ? bias[n] : 0;
      for (int32_t k = 0; k < x.cols; ++k) acc += int32_t{xr[k]} * int32_t{wr[k]};
      const int32_t out = fp::multiply_by_quantized_multiplier_s64(acc, p.multiplier[n], p.shift[n]);
      yr[n] = static_cast<int16_t>(fp::clamp_i32(out, p.act_min, p.act_max));
    }
  }
}

}  // namespace detail
}  // namespace attn
