// linear into the residual, portable scalar: the FFN's W2 of
// attn/transformer_fixed.h adds its accumulators straight to the int32
// residual rows, with no int8 / int16 output grid in between (measured: an
// int8 W2 output clipped the test inputs beyond the calibrated range and
// cost 3.5 dB on a post-norm model, s8 and s16 alike).
//   s8:  acc = bias[c] + sum x w (int32), r = sat32(r + round(acc m 2^(sh - 31)))
//   s16: acc = bias[c] + sum x w (int64), r = sat32(r + round(acc q15(m) 2^(sh - 15)))
#include "internal/kernels_model_fixed.h"

namespace attn {
namespace detail {

#if ATTN_WITH_S8
void linear_residual_s8_ref(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                            const int32_t* shift, MatS32 r) {
  for (int32_t m = 0; m < x.rows; ++m) {
    const int8_t* xr = x.row(m);
    int32_t* rr = r.row(m);
    for (int32_t c = 0; c < w.rows; ++c) {
      const int8_t* wr = w.row(c);
      int32_t acc = bias != nullptr ? bias[c] : 0;
      for (int32_t k = 0; k < x.cols; ++k) acc += int32_t{xr[k]} * int32_t{wr[k]};
      rr[c] = saturate_s32(int64_t{rr[c]} + rescale_q31(acc, multiplier[c], shift[c]));
    }
  }
}
#endif

#if ATTN_WITH_S16
void linear_residual_s16_ref(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const int32_t* multiplier,
                             const int32_t* shift, MatS32 r) {
  for (int32_t m = 0; m < x.rows; ++m) {
    const int16_t* xr = x.row(m);
    int32_t* rr = r.row(m);
    for (int32_t c = 0; c < w.rows; ++c) {
      const int8_t* wr = w.row(c);
      int64_t acc = bias != nullptr ? bias[c] : 0;
      for (int32_t k = 0; k < x.cols; ++k) acc += int32_t{xr[k]} * int32_t{wr[k]};
      rr[c] = saturate_s32(int64_t{rr[c]} + rescale_q15_s64(acc, multiplier[c], shift[c]));
    }
  }
}
#endif

}  // namespace detail
}  // namespace attn
