// linear into the residual, int8, Cortex-M55 Helium (MVE, internal/dot_rows_s8.h: four channels per pass, 16
// MACs per VMLADAVA): r = sat32(r + round(acc m 2^(sh - 31))) with acc = bias + sum x w, the int32 sums of
// linear_residual_s8_ref and its epilogue (rescale_q31 in int64): bit-exact.
#include "internal/arch.h"

#if ATTN_HAVE_MVE
#include "internal/dot_rows_s8.h"
#include "internal/kernels_model_fixed.h"

namespace attn {
namespace detail {

void linear_residual_s8_mve(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                            const int32_t* shift, MatS32 r) {
  mve::dot_rows(x, w, bias, [&](int32_t m, int32_t n, int32_t acc) {
    int32_t* rr = r.row(m) + n;
    *rr = saturate_s32(int64_t{*rr} + rescale_q31(acc, multiplier[n], shift[n]));
  });
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_MVE
