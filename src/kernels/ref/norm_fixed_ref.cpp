// norm, int32 residual rows -> int8 / int16 / int32, portable scalar: the
// integer LayerNorm and RMSNorm of attn/transformer_fixed.h (NormFixed).
//
// Per row (E values x_i on the residual grid; the steps of
// kernels/kernels_model_fixed.h, shared with the SIMD variants):
//   LayerNorm: mean = round(sum x / E) (int64 sum); RMSNorm: mean = 0
//   d_i = sat32(x_i - mean), b = bits(max |d|), k = max(0, b - 23)
//   sq = sum round(d_i / 2^k)^2                          (int64, exact)
//   R  = norm_multiplier(sq, E, eps, b, k): one exact integer 1/sqrt per row
//   per element, 32-bit: u = d 2^(29 - b), n = round(u R / 2^31) (Q.F),
//   p = round(n w_i / 2^31), y = clamp(zp + round((p + bias_i) / 2^shift))
// Every step is an exact integer operation: the same bits on every target.
#include "kernels/kernels_model_fixed.h"

namespace attn {
namespace detail {
namespace {

template <typename Out>
void norm_rows(ConstMatS32 x, NormKind kind, const NormFixed& p, Matrix<Out> y, int32_t lo, int32_t hi) {
  const int32_t E = x.cols;
  for (int32_t r = 0; r < x.rows; ++r) {
    const int32_t* xr = x.row(r);  // [E]
    const int32_t mean = kind == NormKind::kLayerNorm ? norm_mean(norm_sum_from(xr, 0, E, 0), E) : 0;
    const int32_t b = bit_length_u32(norm_max_abs_from(xr, 0, E, mean, 0));
    const int32_t k = norm_reduce_shift(b);
    const uint64_t sq = norm_sq_from(xr, 0, E, mean, k, 0);  // < E * 2^46
    const int32_t R = norm_multiplier(sq, E, p.eps, b, k);
    norm_store_from(xr, 0, E, mean, 29 - b, R, p, lo, hi, y.row(r));
  }
}

}  // namespace

#if ATTN_WITH_S8
void norm_s8_ref(ConstMatS32 x, NormKind kind, const NormFixed& p, MatS8 y) {
  norm_rows(x, kind, p, y, -128, 127);
}
#endif
#if ATTN_WITH_S16
void norm_s16_ref(ConstMatS32 x, NormKind kind, const NormFixed& p, MatS16 y) {
  norm_rows(x, kind, p, y, -32768, 32767);
}
#endif
void norm_s32_ref(ConstMatS32 x, NormKind kind, const NormFixed& p, MatS32 y) {
  norm_rows(x, kind, p, y, INT32_MIN, INT32_MAX);
}

}  // namespace detail
}  // namespace attn
