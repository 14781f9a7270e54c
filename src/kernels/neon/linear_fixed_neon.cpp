// linear, int8 and int16 x int8, NEON (AArch64, with SDOT for the int8 dot products where
// __ARM_FEATURE_DOTPROD is set, and ARMv7-A): the linear_s8_ref / linear_s16_ref
// arithmetic, bit-exact (kernels/neon/neon_fixed.h has the kernels and why they are exact).
#include "attn/config.h"
#include "kernels/arch.h"

#if ATTN_HAVE_NEON
#include "kernels/neon/neon_fixed.h"

namespace attn {
namespace detail {

#if ATTN_WITH_S8
void linear_s8_neon(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y) {
  neonfx::linear_s8(x, w, bias, p, y);
}
#endif
#if ATTN_WITH_S16
void linear_s16_neon(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const LinearS16Params& p, MatS16 y) {
  neonfx::linear_s16(x, w, bias, p, y);
}
#endif

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON
