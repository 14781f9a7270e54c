// ReLU, float32, NEON (AArch64 and ARMv7-A), in place, times up when given.
// NaN stays NaN: FMAX / VMAX return NaN when either operand is NaN.
#include "kernels/arch.h"

#if ATTN_HAVE_NEON
#include "kernels/activation_f32.h"
#include "kernels/kernels_f32.h"
#include "kernels/neon/neon_f32.h"

namespace attn {
namespace detail {

void relu_f32_neon(float* x, const float* up, int32_t n) {
  act::map_times<neon::MapOps>(x, up, n, [](float32x4_t v) { return vmaxq_f32(vdupq_n_f32(0.0f), v); });
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON
