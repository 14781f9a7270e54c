// logits, the integer LM head, int8 and int16, NEON, AArch64 and ARMv7-A (kernels/dot_rows_s8.h: 2 x 4 dot
// blocks, SMLAL or SDOT):
//   s8:  logit = sat32(round(acc m 2^(sh - 31))), acc = bias + sum x w (int32)
//   s16: logit = sat32(round(acc q15(m) 2^(sh - 15))), acc = bias + sum x w (int64)
// ref's sums and epilogue: bit-exact with logits_s8_ref / logits_s16_ref.
#include "kernels/arch.h"

#if ATTN_HAVE_NEON
#include "kernels/dot_rows_s8.h"
#include "kernels/kernels_model_fixed.h"

namespace attn {
namespace detail {

#if ATTN_WITH_S8
void logits_s8_neon(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                    const int32_t* shift, MatS32 y) {
  neonfx::dot_rows(x, w, bias, [&](int32_t m, int32_t v, int32_t acc) {
    y.row(m)[v] = saturate_s32(rescale_q31(acc, multiplier[v], shift[v]));
  });
}
#endif

#if ATTN_WITH_S16
void logits_s16_neon(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const int32_t* multiplier,
                     const int32_t* shift, MatS32 y) {
  neonfx::dot_rows_s16(x, w, bias, [&](int32_t m, int32_t v, int64_t acc) {
    y.row(m)[v] = rescale_q15_s64(acc, multiplier[v], shift[v]);
  });
}
#endif

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_NEON
