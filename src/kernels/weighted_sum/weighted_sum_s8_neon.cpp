// weighted sum, int8 values, NEON (AArch64 and ARMv7-A): the weighted_sum_s8_ref arithmetic, bit-exact
// (internal/neon_fixed.h has the kernel and why it is exact).
#include "internal/arch.h"

#if ATTN_HAVE_NEON
#include "internal/neon_fixed.h"

namespace attn {
namespace detail {

void weighted_sum_s8_neon(ConstMatS16 p, ConstMatS8 v, int32_t zv, int32_t m, int32_t sh, int32_t zo,
                          MatS8 o) {
  neonfx::weighted_sum_s8(p, v, zv, m, sh, zo, o);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON
