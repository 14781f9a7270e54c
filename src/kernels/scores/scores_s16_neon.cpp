// scores, int16, NEON (AArch64 and ARMv7-A): the scores_s16_ref arithmetic, bit-exact
// (internal/neon_fixed.h has the kernel and why it is exact).
#include "internal/arch.h"

#if ATTN_HAVE_NEON
#include "internal/neon_fixed.h"

namespace attn {
namespace detail {

void scores_s16_neon(ConstMatS16 q, ConstMatS16 k, int32_t score_shift, MatS32 s) {
  neonfx::scores_s16(q, k, score_shift, s);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON
