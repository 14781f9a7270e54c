// scores, int16, ARMv7-A NEON: the scores_s16_ref arithmetic, bit-exact
// (internal/neon_fixed.h has the kernel and why it is exact).
#include "internal/arch.h"

#if ATTN_HAVE_NEON32
#include "internal/neon_fixed.h"

namespace attn {
namespace detail {

void scores_s16_neon32(ConstMatS16 q, ConstMatS16 k, int32_t score_shift, MatS32 s) {
  neonfx::scores_s16(q, k, score_shift, s);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON32
