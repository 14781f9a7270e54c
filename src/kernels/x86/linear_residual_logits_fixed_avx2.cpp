// The int32-output linears (W2 into the residual, the LM head's logits), int8
// and int16, x86-64 AVX2 (kernels/x86/dot_rows_avx2.h: s8 from 4 rows a
// packed-panel madd product, avx2i::gemm_s8; fewer rows and s16 2 x 4 dot blocks):
//   s8:  y = sat32([r +] round(acc m 2^(sh - 31))), acc = bias + sum x w (int32)
//   s16: y = sat32([r +] round(acc q15(m) 2^(sh - 15))), acc = bias + sum x w (int64)
// ref's sums (int32 mod 2^32, the same products in another order; int64 exact)
// and ref's epilogue (RescaleInto): bit-exact with linear_residual_*_ref and logits_*_ref.
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2
#include "kernels/kernels_model_fixed.h"
#include "kernels/x86/dot_rows_avx2.h"

namespace attn {
namespace detail {

#if ATTN_WITH_S8
void linear_residual_s8_avx2(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                             const int32_t* shift, MatS32 r) {
  avx2i::dot_rows(x, w, bias, RescaleInto<Out32::kAddToResidual>{multiplier, shift, r});
}
void logits_s8_avx2(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                    const int32_t* shift, MatS32 y) {
  avx2i::dot_rows(x, w, bias, RescaleInto<Out32::kStore>{multiplier, shift, y});
}
#endif

#if ATTN_WITH_S16
void linear_residual_s16_avx2(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const int32_t* multiplier,
                              const int32_t* shift, MatS32 r) {
  avx2i::dot_rows_s16(x, w, bias, RescaleInto<Out32::kAddToResidual>{multiplier, shift, r});
}
void logits_s16_avx2(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const int32_t* multiplier,
                     const int32_t* shift, MatS32 y) {
  avx2i::dot_rows_s16(x, w, bias, RescaleInto<Out32::kStore>{multiplier, shift, y});
}
#endif

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_AVX2
