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
    int32_t mean = 0;
    if (kind == NormKind::kLayerNorm) {
      int64_t sum = 0;
      for (int32_t i = 0; i < E; ++i) sum += xr[i];
      mean = norm_mean(sum, E);
    }
    uint32_t max_abs = 0;
    for (int32_t i = 0; i < E; ++i) {
      const int32_t d = saturating_sub32(xr[i], mean);
      const uint32_t a = d < 0 ? 0u - static_cast<uint32_t>(d) : static_cast<uint32_t>(d);
      max_abs = a > max_abs ? a : max_abs;
    }
    const int32_t b = bit_length_u32(max_abs);
    const int32_t k = norm_reduce_shift(b);
    uint64_t sq = 0;  // < E * 2^46
    for (int32_t i = 0; i < E; ++i) {
      const int32_t d = rshift_round32(saturating_sub32(xr[i], mean), k);
      sq += static_cast<uint64_t>(int64_t{d} * d);
    }
    const int32_t R = norm_multiplier(sq, E, p.eps, b, k);
    Out* yr = y.row(r);
    for (int32_t i = 0; i < E; ++i) {
      const int32_t v = norm_element(saturating_sub32(xr[i], mean), 29 - b, R, p.weight[i],
                                     p.bias != nullptr ? p.bias[i] : 0, p.shift);
      const int64_t out = int64_t{p.output_zero_point} + v;
      yr[i] = static_cast<Out>(out < lo ? lo : out > hi ? hi : out);
    }
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
