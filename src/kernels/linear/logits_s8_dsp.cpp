// logits, the integer LM head, int8, Cortex-M DSP extension (SMLAD, internal/dot_rows_s8.h: four rows
// expanded once, 15 instructions per 16 MACs; one row: two channels per pass): logit = sat32(round(acc m
// 2^(sh - 31))) with acc = bias + sum x w, the int32 sums of logits_s8_ref and its epilogue: bit-exact.
#include "internal/arch.h"

#if ATTN_HAVE_DSP
#include "internal/dot_rows_s8.h"
#include "internal/kernels_model_fixed.h"

namespace attn {
namespace detail {

void logits_s8_dsp(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                   const int32_t* shift, MatS32 y) {
  if (x.cols > dsp::kDotRowsMaxK) {
    logits_s8_ref(x, w, bias, multiplier, shift, y);
    return;
  }
  dsp::dot_rows(x, w, bias, [&](int32_t m, int32_t v, int32_t acc) {
    y.row(m)[v] = saturate_s32(rescale_q31(acc, multiplier[v], shift[v]));
  });
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_DSP
