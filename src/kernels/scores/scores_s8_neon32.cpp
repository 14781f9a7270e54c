// scores, int8, ARMv7-A NEON: the scores_s8_ref arithmetic, bit-exact
// (internal/neon_fixed.h has the kernel and why it is exact).
#include "internal/arch.h"

#if ATTN_HAVE_NEON32
#include "internal/neon_fixed.h"

namespace attn {
namespace detail {

void scores_s8_neon32(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t score_shift, MatS32 s) {
  neonfx::scores_s8(q, zq, k, zk, score_shift, s);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON32
