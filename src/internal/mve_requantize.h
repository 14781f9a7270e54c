// internal/mve_requantize.h: fp::multiply_by_quantized_multiplier on four
// int32 lanes with one multiplier and shift (multiplier >= 0), for the Helium
// kernels. Bit-exact with the scalar form:
//   SRDHM(a, m) = floor((a m + 2^30) / 2^31) = VQRDMULH (saturation needs
//   m = INT32_MIN, excluded); the right shift rounding half away from zero =
//   VRSHL (half up, exact in the architecture's wider arithmetic) applied to
//   v - 1 for negative v (v > INT32_MIN since |v| <= |a m| / 2^31 < 2^31).
#pragma once

#include "internal/arch.h"

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

}  // namespace mve
}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_MVE
