// The int32-output linears (W2 into the residual, the LM head's logits), int8,
// Cortex-M DSP extension (SMLAD, internal/dot_rows_s8.h: four rows expanded
// once, 15 instructions per 16 MACs; one row: two channels per pass):
// y = sat32([r +] round(acc m 2^(sh - 31))) with acc = bias + sum x w, the
// int32 sums of the ref and its epilogue (rescale_q31 in int64): bit-exact.
#include "internal/arch.h"

#if ATTN_HAVE_DSP
#include "internal/dot_rows_s8.h"
#include "internal/kernels_model_fixed.h"

namespace attn {
namespace detail {
namespace {

template <Out32 kOut>
void rescaled_rows_dsp(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                       const int32_t* shift, MatS32 y) {
  dsp::dot_rows(x, w, bias, [&](int32_t m, int32_t c, int32_t acc) {
    put_rescaled<kOut>(y.row(m) + c, rescale_q31(acc, multiplier[c], shift[c]));
  });
}

}  // namespace

void linear_residual_s8_dsp(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                            const int32_t* shift, MatS32 r) {
  if (x.cols > dsp::kDotRowsMaxK) return linear_residual_s8_ref(x, w, bias, multiplier, shift, r);
  rescaled_rows_dsp<Out32::kAddToResidual>(x, w, bias, multiplier, shift, r);
}

void logits_s8_dsp(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                   const int32_t* shift, MatS32 y) {
  if (x.cols > dsp::kDotRowsMaxK) return logits_s8_ref(x, w, bias, multiplier, shift, y);
  rescaled_rows_dsp<Out32::kStore>(x, w, bias, multiplier, shift, y);
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_DSP
