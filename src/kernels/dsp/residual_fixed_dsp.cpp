// residual, the int32 residual stream's rescales, Cortex-M DSP extension (M4,
// M7, M33): RescaleFixed's 32-bit steps with SMMULR (= mulhi_round32), QADD
// for the saturating add and SSAT for the clamp; bit-exact with the ref. The
// usual shifts (a rounding right shift of the SMMULR result, |.| < 2^30, so
// adding the half cannot overflow) take the short loop, any other through the
// shared scalar step; the row loop is the ref's (kernels/model_fixed_rows.h).
#include "kernels/arch.h"

#if ATTN_HAVE_DSP
#include <arm_acle.h>

#include "kernels/dsp/dsp_s8.h"
#include "kernels/model_fixed_rows.h"

namespace attn {
namespace detail {
// The usual shifts only; any other row is left to the shared scalar step.
template <>
struct ResidualOps<Isa::kDsp> {
  template <typename Act>
  static int32_t to_act(const int32_t* x, const RescaleFixed& r, Act* y, int32_t n, int32_t lo, int32_t hi) {
    const int32_t s = -1 - r.shift;
    if (s < 1) return 0;
    const int32_t m = r.multiplier, zp = r.zero_point;
    const int32_t half = int32_t{1} << (s - 1);
    for (int32_t c = 0; c < n; ++c) {
      const int32_t t = dsp::smmulr(x[c], m);  // |t| < 2^30
      const int32_t q = ((t + half) >> s) + zp;
      y[c] = static_cast<Act>(q < lo ? lo : q > hi ? hi : q);  // SSAT
    }
    return n;
  }
  template <typename Act>
  static int32_t add(int32_t* x, const Act* y, int32_t n, const RescaleFixed& r) {
    constexpr int32_t kPre = kResidualAddPreShift<Act>;
    const int32_t s = kPre - 1 - r.shift;  // right shift of the product
    if (s < 1 || s > 31) return 0;
    const int32_t m = r.multiplier, zp = r.zero_point;
    const int32_t half = int32_t{1} << (s - 1);
    for (int32_t c = 0; c < n; ++c) {
      const int32_t t = dsp::smmulr((int32_t{y[c]} - zp) << kPre, m);  // |t| < 2^29
      x[c] = __qadd(x[c], (t + half) >> s);
    }
    return n;
  }
};
template struct ResidualRows<Isa::kDsp>;

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_DSP
