// scores, int8 and int16, NEON (AArch64, with SDOT for the int8 dot products where
// __ARM_FEATURE_DOTPROD is set, and ARMv7-A): the scores_s8_ref / scores_s16_ref
// arithmetic, bit-exact (kernels/neon/neon_fixed.h has the kernels and why they are exact).
#include "attn/config.h"
#include "kernels/arch.h"

#if ATTN_HAVE_NEON
#include "kernels/neon/neon_fixed.h"

namespace attn {
namespace detail {

#if ATTN_WITH_S8
void scores_s8_neon(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t score_shift, MatS32 s) {
  neonfx::scores_s8(q, zq, k, zk, score_shift, s);
}
#endif
#if ATTN_WITH_S16
void scores_s16_neon(ConstMatS16 q, ConstMatS16 k, int32_t score_shift, MatS32 s) {
  neonfx::scores_s16(q, k, score_shift, s);
}
#endif

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON
