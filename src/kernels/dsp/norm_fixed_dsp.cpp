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

#include "kernels/dsp/dsp_s8.h"
#include "kernels/model_fixed_rows.h"

namespace attn {
namespace detail {
template <>
struct NormOps<Isa::kDsp> {
  static int32_t cols(int32_t E) { return E; }
  static int64_t sum(const int32_t* x, int32_t n) {
    int64_t s = 0;
    for (int32_t i = 0; i < n; ++i) s += x[i];
    return s;
  }
  static uint32_t max_abs(const int32_t* x, int32_t n, int32_t mean) {
    uint32_t m = 0;
    for (int32_t i = 0; i < n; ++i) {
      const int32_t d = __qsub(x[i], mean);
      const int32_t s = d >> 31;
      const uint32_t a = static_cast<uint32_t>((d ^ s) - s);
      m = a > m ? a : m;
    }
    return m;
  }
  static uint64_t sum_sq(const int32_t* x, int32_t n, int32_t mean, int32_t k) {
    int64_t sq = 0;
    if (k == 0) {
      for (int32_t i = 0; i < n; ++i) {
        const int32_t d = __qsub(x[i], mean);
        sq += int64_t{d} * d;  // SMLAL
      }
    } else {
      for (int32_t i = 0; i < n; ++i) {
        const int32_t d = rshift_round32(__qsub(x[i], mean), k);
        sq += int64_t{d} * d;
      }
    }
    return static_cast<uint64_t>(sq);
  }
  // The common rows (u_shift >= 0, shift >= 1); the others through the
  // shared scalar step.
  template <typename Out>
  static void store(const int32_t* x, int32_t n, int32_t mean, int32_t u_shift, int32_t R, const NormFixed& p,
                    int32_t lo, int32_t hi, Out* y) {
    if (u_shift < 0 || p.shift < 1) return norm_store_from(x, 0, n, mean, u_shift, R, p, lo, hi, y);
    const int32_t u2 = u_shift + 1;  // 2u = d 2^(30 - b)
    const int32_t sh = p.shift, zp = p.output_zero_point;
    const int32_t half = int32_t{1} << (sh - 1);
    const int32_t* w = p.weight;
    const int32_t* bias = p.bias;
    for (int32_t i = 0; i < n; ++i) {
      const int32_t d = __qsub(x[i], mean);
      const int32_t nq = dsp::smmulr(d << u2, R);
      int32_t acc = dsp::smmulr(nq << 1, w[i]) + half;
      if (bias != nullptr) acc += bias[i];
      const int32_t v = (acc >> sh) + zp;
      y[i] = static_cast<Out>(v < lo ? lo : v > hi ? hi : v);  // SSAT
    }
  }
};
template struct NormRows<Isa::kDsp>;

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_DSP
