// kernels/mve/mve_requantize.h: the fixed-point helpers of the Helium kernels.
//
// requantize: fp::multiply_by_quantized_multiplier on four
// int32 lanes with one multiplier and shift (multiplier >= 0), for the Helium
// kernels. Bit-exact with the scalar form:
//   SRDHM(a, m) = floor((a m + 2^30) / 2^31) = VQRDMULH (saturation needs
//   m = INT32_MIN, excluded); the right shift rounding half away from zero =
//   VRSHL (half up, exact in the architecture's wider arithmetic) applied to
//   v - 1 for negative v (v > INT32_MIN since |v| <= |a m| / 2^31 < 2^31).
#pragma once

#include "kernels/arch.h"

#if ATTN_HAVE_MVE
#include <arm_mve.h>

#include <cstdint>

namespace attn {
namespace detail {
namespace mve {

inline int32x4_t requantize(int32x4_t x, int32_t multiplier, int32_t shift) {
  const int32_t left = shift > 0 ? shift : 0;
  const int32_t right = shift > 0 ? 0 : -shift;
  int32x4_t v = vqrdmulhq_n_s32(vshlq_s32(x, vdupq_n_s32(left)), multiplier);
  if (right == 0) return v;
  v = vaddq_s32(v, vshrq_n_s32(v, 31));
  return vrshlq_s32(v, vdupq_n_s32(-right));
}

// fp::one_over_one_plus_x_for_x_in_0_1 for a in [0, 2^31), on vector lanes
// (four arguments at once, or one):
// SRDHM is VQRDMULH (both round half up: see kernels/mve/mve_requantize.h), the
// saturating shifts left are VQSHL, RoundingHalfSum(a, INT32_MAX) is VRHADD
// for a >= 0, the wrapping adds are VADD/VSUB. Same steps, same results; a
// fifth of the scalar form's instructions (its products are 64-bit).
inline int32x4_t one_over_one_plus_x(int32x4_t a) {
  const int32x4_t half_denominator = vrhaddq_s32(a, vdupq_n_s32(INT32_MAX));
  const int32x4_t one = vdupq_n_s32(int32_t{1} << 29);                                    // 1.0 in Q2.29
  int32x4_t x = vaddq_n_s32(vqrdmulhq_n_s32(half_denominator, -1010580540), 1515870810);  // 48/17 - 32/17 d
  for (int i = 0; i < 3; ++i) {
    const int32x4_t one_minus = vsubq_s32(one, vqrdmulhq_s32(half_denominator, x));
    x = vaddq_s32(x, vqshlq_n_s32(vqrdmulhq_s32(x, one_minus), 2));
  }
  return vqshlq_n_s32(x, 1);
}
inline int32_t one_over_one_plus_x(int32_t a) {
  return vgetq_lane_s32(one_over_one_plus_x(vdupq_n_s32(a)), 0);
}

}  // namespace mve
}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_MVE
