// linear, int16 x int8, NEON (AArch64 and ARMv7-A): the linear_s16_ref arithmetic, bit-exact
// (internal/neon_fixed.h has the kernel and why it is exact).
#include "internal/arch.h"

#if ATTN_HAVE_NEON
#include "internal/neon_fixed.h"

namespace attn {
namespace detail {

void linear_s16_neon(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const LinearS16Params& p, MatS16 y) {
  neonfx::linear_s16(x, w, bias, p, y);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON
