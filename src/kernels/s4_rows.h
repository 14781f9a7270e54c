// kernels/s4_rows.h: the linears over int4 weights (S4Rows, kernels/kernels_model_fixed.h)
// as one template per op: each ISA's file defines S4DotOps<kIsa>::rows (the
// sums) and instantiates S4Rows<kIsa>; the epilogues below are the int8-weight
// kernels' own (linear_s8_ref, linear_s16_ref, RescaleInto), so the results
// are theirs on the unpacked weights.
#pragma once

#include <cstdint>

#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"
#include "kernels/kernels_model_fixed.h"

namespace attn {
namespace detail {

// y[m, c] = clamp(zp_out + MBQM(acc, multiplier[c], shift[c])): linear_s8_ref's requantization.
struct RequantS8Into {
  const LinearS8Params& p;
  MatS8 y;
  ATTN_ALWAYS_INLINE void operator()(int32_t m, int32_t c, int32_t acc) const {
    const int32_t out =
        p.output_zero_point + fp::multiply_by_quantized_multiplier(acc, p.multiplier[c], p.shift[c]);
    y.row(m)[c] = static_cast<int8_t>(fp::clamp_i32(out, p.act_min, p.act_max));
  }
};
// y[m, c] = clamp(MBQM64(acc, multiplier[c], shift[c])): linear_s16_ref's.
struct RequantS16Into {
  const LinearS16Params& p;
  MatS16 y;
  ATTN_ALWAYS_INLINE void operator()(int32_t m, int32_t c, int64_t acc) const {
    const int32_t out = fp::multiply_by_quantized_multiplier_s64(acc, p.multiplier[c], p.shift[c]);
    y.row(m)[c] = static_cast<int16_t>(fp::clamp_i32(out, p.act_min, p.act_max));
  }
};

#if ATTN_WITH_S8
template <Isa kIsa>
void S4Rows<kIsa>::linear_s8(ConstMatS8 x, ConstMatS4 w, const int32_t* bias, const LinearS8Params& p,
                             MatS8 y) {
  S4DotOps<kIsa>::rows(x, w, bias, RequantS8Into{p, y});
}
template <Isa kIsa>
void S4Rows<kIsa>::linear_residual_s8(ConstMatS8 x, ConstMatS4 w, const int32_t* bias,
                                      const int32_t* multiplier, const int32_t* shift, MatS32 r) {
  S4DotOps<kIsa>::rows(x, w, bias, RescaleInto<Out32::kAddToResidual>{multiplier, shift, r});
}
template <Isa kIsa>
void S4Rows<kIsa>::logits_s8(ConstMatS8 x, ConstMatS4 w, const int32_t* bias, const int32_t* multiplier,
                             const int32_t* shift, MatS32 y) {
  S4DotOps<kIsa>::rows(x, w, bias, RescaleInto<Out32::kStore>{multiplier, shift, y});
}
#endif
#if ATTN_WITH_S16
template <Isa kIsa>
void S4Rows<kIsa>::linear_s16(ConstMatS16 x, ConstMatS4 w, const int64_t* bias, const LinearS16Params& p,
                              MatS16 y) {
  S4DotOps<kIsa>::rows(x, w, bias, RequantS16Into{p, y});
}
template <Isa kIsa>
void S4Rows<kIsa>::linear_residual_s16(ConstMatS16 x, ConstMatS4 w, const int64_t* bias,
                                       const int32_t* multiplier, const int32_t* shift, MatS32 r) {
  S4DotOps<kIsa>::rows(x, w, bias, RescaleInto<Out32::kAddToResidual>{multiplier, shift, r});
}
template <Isa kIsa>
void S4Rows<kIsa>::logits_s16(ConstMatS16 x, ConstMatS4 w, const int64_t* bias, const int32_t* multiplier,
                              const int32_t* shift, MatS32 y) {
  S4DotOps<kIsa>::rows(x, w, bias, RescaleInto<Out32::kStore>{multiplier, shift, y});
}
#endif

}  // namespace detail
}  // namespace attn
