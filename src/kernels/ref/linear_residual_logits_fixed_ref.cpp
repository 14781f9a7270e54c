// The int32-output linears of attn/transformer_fixed.h, portable scalar:
// - linear_residual: the FFN's W2 adds its accumulators straight to the int32
//   residual rows, with no int8 / int16 output grid in between (measured: an
//   int8 W2 output clipped the test inputs beyond the calibrated range and
//   cost 3.5 dB on a post-norm model, s8 and s16 alike);
// - logits: the LM head, int8 / int16 hidden rows times int8 weights [V, E],
//   per-row rescale to the int32 logit grid.
//   s8:  acc = bias[c] + sum x w (int32), y = sat32([r +] round(acc m 2^(sh - 31)))
//   s16: acc = bias[c] + sum x w (int64), y = sat32([r +] round(acc q15(m) 2^(sh - 15)))
#include "kernels/kernels_model_fixed.h"

namespace attn {
namespace detail {

#if ATTN_WITH_S8
void linear_residual_s8_ref(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                            const int32_t* shift, MatS32 r) {
  dot_rows_ref(x, w, bias, RescaleInto<Out32::kAddToResidual>{multiplier, shift, r});
}
void logits_s8_ref(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                   const int32_t* shift, MatS32 y) {
  dot_rows_ref(x, w, bias, RescaleInto<Out32::kStore>{multiplier, shift, y});
}
#endif

#if ATTN_WITH_S16
void linear_residual_s16_ref(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const int32_t* multiplier,
                             const int32_t* shift, MatS32 r) {
  dot_rows_ref(x, w, bias, RescaleInto<Out32::kAddToResidual>{multiplier, shift, r});
}
void logits_s16_ref(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const int32_t* multiplier,
                    const int32_t* shift, MatS32 y) {
  dot_rows_ref(x, w, bias, RescaleInto<Out32::kStore>{multiplier, shift, y});
}
#endif

}  // namespace detail
}  // namespace attn
