// scores, int8, NEON (AArch64 and ARMv7-A) (SDOT for the int8 dot products where __ARM_FEATURE_DOTPROD is
// set): the scores_s8_ref arithmetic, bit-exact (internal/neon_fixed.h has the kernel and why it is exact).
#include "internal/arch.h"

#if ATTN_HAVE_NEON
#include "internal/neon_fixed.h"

namespace attn {
namespace detail {

void scores_s8_neon(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t score_shift, MatS32 s) {
  neonfx::scores_s8(q, zq, k, zk, score_shift, s);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON
