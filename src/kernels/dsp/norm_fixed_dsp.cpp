// norm, int32 residual rows -> int8 / int16 / int32, Cortex-M DSP extension
// (M4, M7, M33): NormFixed's arithmetic with SMMULR for the two Q31 products
// (round(2a b / 2^32) = mulhi_round_q31(a, b) for |a| <= 2^30: |u|, |n| <=
// 2^29), QSUB for d and a clamp (SSAT); bit-exact with norm_*_ref. The
// common rows (b <= 29: u a plain left shift; shift >= 1: a rounding right
// shift that cannot overflow, |p + bias| < 2^30) take the short loop; the
// rest go through the shared scalar step (norm_element).
#include "kernels/arch.h"

#if ATTN_HAVE_DSP
#include <arm_acle.h>

#include "kernels/kernels_model_fixed.h"

namespace attn {
namespace detail {
namespace {

inline int32_t smmulr(int32_t a, int32_t b) {
  int32_t r;
  __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
  return r;
}

template <typename Out, int kBits>
inline Out clamp_out(int32_t v) {
  if constexpr (kBits == 32) {
    return v;
  } else {
    constexpr int32_t hi = (int32_t{1} << (kBits - 1)) - 1;  // SSAT
    return static_cast<Out>(v < -hi - 1 ? -hi - 1 : v > hi ? hi : v);
  }
}

template <typename Out, int kBits>
void norm_rows_dsp(ConstMatS32 x, NormKind kind, const NormFixed& p, Matrix<Out> y) {
  const int32_t E = x.cols;
  const int32_t zp = p.output_zero_point;
  for (int32_t r = 0; r < x.rows; ++r) {
    const int32_t* xr = x.row(r);
    int32_t mean = 0;
    if (kind == NormKind::kLayerNorm) {
      int64_t sum = 0;
      for (int32_t i = 0; i < E; ++i) sum += xr[i];
      mean = norm_mean(sum, E);
    }
    uint32_t max_abs = 0;
    for (int32_t i = 0; i < E; ++i) {
      const int32_t d = __qsub(xr[i], mean);
      const int32_t s = d >> 31;
      const uint32_t a = static_cast<uint32_t>((d ^ s) - s);
      max_abs = a > max_abs ? a : max_abs;
    }
    const int32_t b = bit_length_u32(max_abs);
    const int32_t k = norm_reduce_shift(b);
    int64_t sq = 0;
    if (k == 0) {
      for (int32_t i = 0; i < E; ++i) {
        const int32_t d = __qsub(xr[i], mean);
        sq += int64_t{d} * d;  // SMLAL
      }
    } else {
      for (int32_t i = 0; i < E; ++i) {
        const int32_t d = rshift_round32(__qsub(xr[i], mean), k);
        sq += int64_t{d} * d;
      }
    }
    const int32_t R = norm_multiplier(static_cast<uint64_t>(sq), E, p.eps, b, k);
    Out* yr = y.row(r);
    const int32_t* w = p.weight;
    const int32_t* bias = p.bias;
    if (b <= 29 && p.shift >= 1) {
      const int32_t u2 = 30 - b;  // 2u = d 2^(30 - b)
      const int32_t sh = p.shift;
      const int32_t half = int32_t{1} << (sh - 1);
      for (int32_t i = 0; i < E; ++i) {
        const int32_t d = __qsub(xr[i], mean);
        const int32_t n = smmulr(d << u2, R);
        int32_t acc = smmulr(n << 1, w[i]) + half;
        if (bias != nullptr) acc += bias[i];
        yr[i] = clamp_out<Out, kBits>((acc >> sh) + zp);
      }
    } else {
      for (int32_t i = 0; i < E; ++i) {
        const int32_t v =
            norm_element(__qsub(xr[i], mean), 29 - b, R, w[i], bias != nullptr ? bias[i] : 0, p.shift);
        const int64_t out = int64_t{zp} + v;
        yr[i] = static_cast<Out>(kBits == 32
                                     ? saturate_s32(out)
                                     : (out < -(int64_t{1} << (kBits - 1))   ? -(int64_t{1} << (kBits - 1))
                                        : out >= (int64_t{1} << (kBits - 1)) ? (int64_t{1} << (kBits - 1)) - 1
                                                                             : out));
      }
    }
  }
}

}  // namespace

#if ATTN_WITH_S8
void norm_s8_dsp(ConstMatS32 x, NormKind kind, const NormFixed& p, MatS8 y) {
  norm_rows_dsp<int8_t, 8>(x, kind, p, y);
}
#endif
#if ATTN_WITH_S16
void norm_s16_dsp(ConstMatS32 x, NormKind kind, const NormFixed& p, MatS16 y) {
  norm_rows_dsp<int16_t, 16>(x, kind, p, y);
}
#endif
void norm_s32_dsp(ConstMatS32 x, NormKind kind, const NormFixed& p, MatS32 y) {
  norm_rows_dsp<int32_t, 32>(x, kind, p, y);
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_DSP
