// The int32-output linears (W2 into the residual, the LM head's logits), int8
// and int16, NEON, AArch64 and ARMv7-A (kernels/neon/dot_rows_neon.h:
// 2 x 4 dot blocks, SMLAL or SDOT):
//   s8:  y = sat32([r +] round(acc m 2^(sh - 31))), acc = bias + sum x w (int32)
//   s16: y = sat32([r +] round(acc q15(m) 2^(sh - 15))), acc = bias + sum x w (int64)
// ref's sums (int32 mod 2^32, the same products in another order; int64 exact)
// and ref's epilogue (RescaleInto): bit-exact with linear_residual_*_ref and logits_*_ref.
#include "kernels/arch.h"

#if ATTN_HAVE_NEON
#include "kernels/kernels_model_fixed.h"
#include "kernels/neon/dot_rows_neon.h"

namespace attn {
namespace detail {

#if ATTN_WITH_S8
void linear_residual_s8_neon(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                             const int32_t* shift, MatS32 r) {
  neonfx::dot_rows(x, w, bias, RescaleInto<Out32::kAddToResidual>{multiplier, shift, r});
}
void logits_s8_neon(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                    const int32_t* shift, MatS32 y) {
  neonfx::dot_rows(x, w, bias, RescaleInto<Out32::kStore>{multiplier, shift, y});
}
#endif

#if ATTN_WITH_S16
void linear_residual_s16_neon(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const int32_t* multiplier,
                              const int32_t* shift, MatS32 r) {
  neonfx::dot_rows_s16(x, w, bias, RescaleInto<Out32::kAddToResidual>{multiplier, shift, r});
}
void logits_s16_neon(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const int32_t* multiplier,
                     const int32_t* shift, MatS32 y) {
  neonfx::dot_rows_s16(x, w, bias, RescaleInto<Out32::kStore>{multiplier, shift, y});
}
#endif

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_NEON
