// linear into the residual, int8, Cortex-M DSP extension (SMLAD, internal/dot_rows_s8.h: four rows expanded
// once, 15 instructions per 16 MACs; one row: two channels per pass): r = sat32(r + round(acc m 2^(sh - 31)))
// with acc = bias + sum x w, the int32 sums of linear_residual_s8_ref and its epilogue (rescale_q31 in
// int64): bit-exact.
#include "internal/arch.h"

#if ATTN_HAVE_DSP
#include "internal/dot_rows_s8.h"
#include "internal/kernels_model_fixed.h"

namespace attn {
namespace detail {

void linear_residual_s8_dsp(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                            const int32_t* shift, MatS32 r) {
  if (x.cols > dsp::kDotRowsMaxK) {
    linear_residual_s8_ref(x, w, bias, multiplier, shift, r);
    return;
  }
  dsp::dot_rows(x, w, bias, [&](int32_t m, int32_t n, int32_t acc) {
    int32_t* rr = r.row(m) + n;
    *rr = saturate_s32(int64_t{*rr} + rescale_q31(acc, multiplier[n], shift[n]));
  });
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_DSP
