// linear, int8 and int16 activations x int8 weights, portable scalar; one
// implementation for both dtypes:
//   acc[m, n] = bias[n] + sum_k (x[m, k] - input_zero_point) * w[n, k]
//   y[m, n]   = clamp(output_zero_point + requantize(acc, multiplier[n], shift[n]), act_min, act_max)
// int8: TFLite FULLY_CONNECTED int8 per-channel (int32 acc); int16: CMSIS-NN
// 16x8 arm_fully_connected_s16 (int64 acc, symmetric: zero points 0). See
// fp::Accumulator.
#include <cstdint>

#include "attn/config.h"
#include "internal/fixed_point.h"
#include "internal/kernels_fixed.h"

namespace attn {
namespace detail {
namespace {

template <typename Act, typename Bias>
void linear_ref(Matrix<const Act> x, ConstMatS8 w, const Bias* bias, int32_t zp_in, int32_t zp_out,
                const int32_t* multiplier, const int32_t* shift, int32_t act_min, int32_t act_max,
                Matrix<Act> y) {
  using Acc = typename fp::Accumulator<Act>::Acc;
  for (int32_t m = 0; m < x.rows; ++m) {
    const Act* xr = x.row(m);  // [K]
    Act* yr = y.row(m);        // [N]
    for (int32_t n = 0; n < w.rows; ++n) {
      const int8_t* wr = w.row(n);  // [K]
      Acc acc = bias != nullptr ? bias[n] : 0;
      for (int32_t k = 0; k < x.cols; ++k) acc += (int32_t{xr[k]} - zp_in) * int32_t{wr[k]};
      const int32_t out = zp_out + fp::Accumulator<Act>::requantize(acc, multiplier[n], shift[n]);
      yr[n] = static_cast<Act>(fp::clamp_i32(out, act_min, act_max));
    }
  }
}

}  // namespace

#if ATTN_WITH_S8
void linear_s8_ref(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y) {
  linear_ref(x, w, bias, p.input_zero_point, p.output_zero_point, p.multiplier, p.shift, p.act_min, p.act_max,
             y);
}
#endif
#if ATTN_WITH_S16
void linear_s16_ref(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const LinearS16Params& p, MatS16 y) {
  linear_ref(x, w, bias, 0, 0, p.multiplier, p.shift, p.act_min, p.act_max, y);
}
#endif

}  // namespace detail
}  // namespace attn
