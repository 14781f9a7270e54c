// The int32-output linears (W2 into the residual, the LM head's logits), int8,
// Cortex-M DSP extension (SMLAD, kernels/dsp/dot_rows_s8_dsp.h: four rows expanded
// once, 15 instructions per 16 MACs; one row: two channels per pass):
// y = sat32([r +] round(acc m 2^(sh - 31))) with acc = bias + sum x w, the
// int32 sums of the ref and its epilogue (rescale_q31 in int64): bit-exact.
#include "kernels/arch.h"

#if ATTN_HAVE_DSP
#include "kernels/dsp/dot_rows_s8_dsp.h"
#include "kernels/kernels_model_fixed.h"

namespace attn {
namespace detail {

void linear_residual_s8_dsp(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                            const int32_t* shift, MatS32 r) {
  if (x.cols > dsp::kDotRowsMaxK) return linear_residual_s8_ref(x, w, bias, multiplier, shift, r);
  dsp::dot_rows(x, w, bias, RescaleInto<Out32::kAddToResidual>{multiplier, shift, r});
}

void logits_s8_dsp(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                   const int32_t* shift, MatS32 y) {
  if (x.cols > dsp::kDotRowsMaxK) return logits_s8_ref(x, w, bias, multiplier, shift, y);
  dsp::dot_rows(x, w, bias, RescaleInto<Out32::kStore>{multiplier, shift, y});
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_DSP
