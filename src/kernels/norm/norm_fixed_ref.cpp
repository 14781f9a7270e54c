// norm, int32 residual rows -> int8 / int16 / int32, portable scalar: the
// integer LayerNorm and RMSNorm of attn/transformer_fixed.h (NormFixed).
//
// Per row (E values x_i on the residual grid):
//   LayerNorm: mean = round(sum x / E) (int64 sum), d_i = x_i - mean; RMSNorm: d_i = x_i
//   (the residual grid has ~2^24 steps per calibrated max: the mean's rounding is far below any output step)
//   k = max(0, bits(max |d|) - 23), d'_i = round(d_i / 2^k)         (|d'| < 2^23)
//   v = round(sum d'^2 / E) + round(eps / 4^k), at least 1         (< 2^63)
//   v = m 4^-j with m in [2^60, 2^62); s = floor(sqrt(m)) (exact, bit by bit);
//   R = round(2^62 / s)  (so 1/sqrt(v) ~ 2^j R / 2^62)
//   n_i = round(d'_i R / 2^(62 - kNormFracBits - j))               (|n| <= 2^28)
//   y_i = clamp(zp + round((n_i w_i + b_i) / 2^shift))
// Every step is an exact integer operation: the same bits on every target.
#include "internal/kernels_model_fixed.h"

namespace attn {
namespace detail {
namespace {

constexpr int bit_length_u64(uint64_t v) {
  int n = 0;
  while (v != 0) {
    v >>= 1;
    ++n;
  }
  return n;
}

template <typename Out>
void norm_rows(ConstMatS32 x, NormKind kind, const NormFixed& p, Matrix<Out> y, int64_t lo, int64_t hi) {
  const int32_t E = x.cols;
  for (int32_t r = 0; r < x.rows; ++r) {
    const int32_t* xr = x.row(r);  // [E]
    int64_t mean = 0;
    if (kind == NormKind::kLayerNorm) {
      int64_t sum = 0;
      for (int32_t i = 0; i < E; ++i) sum += xr[i];
      mean = (sum >= 0 ? sum + E / 2 : sum - E / 2) / E;  // rounded half away from zero
    }
    uint64_t max_abs = 0;
    for (int32_t i = 0; i < E; ++i) {
      const int64_t d = xr[i] - mean;
      const uint64_t a = static_cast<uint64_t>(d < 0 ? -d : d);
      max_abs = a > max_abs ? a : max_abs;
    }
    const int len = bit_length_u64(max_abs);
    const int k = len > 23 ? len - 23 : 0;
    const auto reduce = [&](int32_t i) -> int64_t {
      const int64_t d = xr[i] - mean;
      return k > 0 ? fp::rounding_divide_by_pot_s64(d, k) : d;
    };
    uint64_t sq = 0;  // < E * 2^46 <= 2^62
    for (int32_t i = 0; i < E; ++i) {
      const int64_t d = reduce(i);
      sq += static_cast<uint64_t>(d * d);
    }
    const uint64_t e = static_cast<uint64_t>(E);
    uint64_t v = (sq + e / 2) / e;
    v += k > 0 ? static_cast<uint64_t>(fp::rounding_divide_by_pot_s64(p.eps, 2 * k))
               : static_cast<uint64_t>(p.eps);
    if (v == 0) v = 1;
    // v = m 4^-j, m in [2^60, 2^62)
    const int top = bit_length_u64(v) - 1;  // [0, 62]
    const int j = top <= 61 ? (61 - top) / 2 : -1;
    const uint64_t m = j >= 0 ? v << (2 * j) : v >> 2;
    const uint64_t s = isqrt_u64(m);                       // [2^30, 2^31)
    const uint64_t R = ((uint64_t{1} << 62) + s / 2) / s;  // (2^31, 2^32]
    const int n_shift = 62 - kNormFracBits - j;            // [12, 43]
    Out* yr = y.row(r);
    for (int32_t i = 0; i < E; ++i) {
      const int64_t n = fp::rounding_divide_by_pot_s64(reduce(i) * static_cast<int64_t>(R), n_shift);
      int64_t acc = n * p.weight[i];
      if (p.bias != nullptr) acc += p.bias[i];
      int64_t out = p.output_zero_point + fp::rounding_divide_by_pot_s64(acc, p.shift);
      out = out < lo ? lo : out > hi ? hi : out;
      yr[i] = static_cast<Out>(out);
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
