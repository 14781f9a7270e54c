// logits, the integer LM head, int8, Cortex-M55 Helium (MVE, internal/dot_rows_s8.h: four channels per pass,
// 16 MACs per VMLADAVA): logit = sat32(round(acc m 2^(sh - 31))) with acc = bias + sum x w, the int32 sums of
// logits_s8_ref and its epilogue: bit-exact.
#include "internal/arch.h"

#if ATTN_HAVE_MVE
#include "internal/dot_rows_s8.h"
#include "internal/kernels_model_fixed.h"

namespace attn {
namespace detail {

void logits_s8_mve(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                   const int32_t* shift, MatS32 y) {
  mve::dot_rows(x, w, bias, [&](int32_t m, int32_t v, int32_t acc) {
    y.row(m)[v] = saturate_s32(rescale_q31(acc, multiplier[v], shift[v]));
  });
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_MVE
