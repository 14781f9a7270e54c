// linear, int8, portable scalar: TFLite FULLY_CONNECTED int8 per-channel arithmetic.
#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"

namespace attn {
namespace detail {

void linear_s8_ref(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y) {
  for (int32_t m = 0; m < x.rows; ++m) {
    const int8_t* xr = x.row(m);  // [K]
    int8_t* yr = y.row(m);        // [N]
    for (int32_t n = 0; n < w.rows; ++n) {
      const int8_t* wr = w.row(n);  // [K]
      int32_t acc = bias != nullptr ? bias[n] : 0;
      for (int32_t k = 0; k < x.cols; ++k) acc += (int32_t{xr[k]} - p.input_zero_point) * int32_t{wr[k]};
      const int32_t out =
          p.output_zero_point + fp::multiply_by_quantized_multiplier(acc, p.multiplier[n], p.shift[n]);
      yr[n] = static_cast<int8_t>(fp::clamp_i32(out, p.act_min, p.act_max));
    }
  }
}

}  // namespace detail
}  // namespace attn
