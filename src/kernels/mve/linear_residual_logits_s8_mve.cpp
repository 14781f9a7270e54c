// The int32-output linears (W2 into the residual, the LM head's logits), int8,
// Cortex-M55 Helium (MVE, kernels/mve/dot_rows_s8_mve.h: four channels per pass, 16
// MACs per VMLADAVA): y = sat32([r +] round(acc m 2^(sh - 31))) with
// acc = bias + sum x w, the int32 sums of the ref and its epilogue
// (rescale_q31 in int64): bit-exact.
#include "kernels/arch.h"

#if ATTN_HAVE_MVE
#include "kernels/kernels_model_fixed.h"
#include "kernels/mve/dot_rows_s8_mve.h"

namespace attn {
namespace detail {

void linear_residual_s8_mve(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                            const int32_t* shift, MatS32 r) {
  mve::dot_rows(x, w, bias, RescaleInto<Out32::kAddToResidual>{multiplier, shift, r});
}

void logits_s8_mve(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                   const int32_t* shift, MatS32 y) {
  mve::dot_rows(x, w, bias, RescaleInto<Out32::kStore>{multiplier, shift, y});
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_MVE
