// weighted sum, int8 and int16 values, NEON (AArch64, with SDOT for the int8 dot products where
// __ARM_FEATURE_DOTPROD is set, and ARMv7-A): the weighted_sum_s8_ref / weighted_sum_s16_ref
// arithmetic, bit-exact (kernels/neon/neon_fixed.h has the kernels and why they are exact).
#include "attn/config.h"
#include "kernels/arch.h"

#if ATTN_HAVE_NEON
#include "kernels/neon/neon_fixed.h"

namespace attn {
namespace detail {

#if ATTN_WITH_S8
void weighted_sum_s8_neon(ConstMatS16 p, ConstMatS8 v, int32_t zv, const Requant& requant, MatS8 o) {
  const int32_t m = requant.multiplier, sh = requant.shift, zo = requant.zero_point;
  neonfx::weighted_sum_s8(p, v, zv, m, sh, zo, o);
}
#endif
#if ATTN_WITH_S16
void weighted_sum_s16_neon(ConstMatS16 p, ConstMatS16 v, const Requant& requant, MatS16 o) {
  const int32_t m = requant.multiplier, sh = requant.shift;
  neonfx::weighted_sum_s16(p, v, m, sh, o);
}
#endif

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON
