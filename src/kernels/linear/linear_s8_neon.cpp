// linear, int8, NEON (AArch64 and ARMv7-A) (SDOT for the int8 dot products where __ARM_FEATURE_DOTPROD is
// set): the linear_s8_ref arithmetic, bit-exact (internal/neon_fixed.h has the kernel and why it is exact).
#include "internal/arch.h"

#if ATTN_HAVE_NEON
#include "internal/neon_fixed.h"

namespace attn {
namespace detail {

void linear_s8_neon(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y) {
  neonfx::linear_s8(x, w, bias, p, y);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON
