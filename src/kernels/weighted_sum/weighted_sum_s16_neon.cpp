// weighted sum, int16 values, NEON (AArch64 and ARMv7-A): the weighted_sum_s16_ref arithmetic, bit-exact
// (internal/neon_fixed.h has the kernel and why it is exact).
#include "internal/arch.h"

#if ATTN_HAVE_NEON
#include "internal/neon_fixed.h"

namespace attn {
namespace detail {

void weighted_sum_s16_neon(ConstMatS16 p, ConstMatS16 v, int32_t m, int32_t sh, MatS16 o) {
  neonfx::weighted_sum_s16(p, v, m, sh, o);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON
