// logits, the integer LM head of attn/transformer_fixed.h, portable scalar:
// int8 / int16 hidden rows times int8 weights [V, E], per-row rescale to the
// int32 logit grid.
//   s8:  acc = bias[v] + sum x w (int32), logit = sat32(round(acc m 2^(sh - 31)))
//   s16: acc = bias[v] + sum x w (int64), logit = sat32(round(acc q15(m) 2^(sh - 15)))
#include "internal/kernels_model_fixed.h"

namespace attn {
namespace detail {

#if ATTN_WITH_S8
void logits_s8_ref(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                   const int32_t* shift, MatS32 y) {
  for (int32_t m = 0; m < x.rows; ++m) {
    const int8_t* xr = x.row(m);
    int32_t* yr = y.row(m);
    for (int32_t v = 0; v < w.rows; ++v) {
      const int8_t* wr = w.row(v);
      int32_t acc = bias != nullptr ? bias[v] : 0;
      for (int32_t k = 0; k < x.cols; ++k) acc += int32_t{xr[k]} * int32_t{wr[k]};
      yr[v] = saturate_s32(rescale_q31(acc, multiplier[v], shift[v]));
    }
  }
}
#endif

#if ATTN_WITH_S16
void logits_s16_ref(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const int32_t* multiplier,
                    const int32_t* shift, MatS32 y) {
  for (int32_t m = 0; m < x.rows; ++m) {
    const int16_t* xr = x.row(m);
    int32_t* yr = y.row(m);
    for (int32_t v = 0; v < w.rows; ++v) {
      const int8_t* wr = w.row(v);
      int64_t acc = bias != nullptr ? bias[v] : 0;
      for (int32_t k = 0; k < x.cols; ++k) acc += int32_t{xr[k]} * int32_t{wr[k]};
      yr[v] = rescale_q15_s64(acc, multiplier[v], shift[v]);
    }
  }
}
#endif

}  // namespace detail
}  // namespace attn
