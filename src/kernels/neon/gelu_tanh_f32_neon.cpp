// GELU, tanh approximation, float32, NEON (AArch64 and ARMv7-A), in place,
// times up when given: x/2 (1 + tanh(y)) = x sigmoid(2y), y = sqrt(2/pi)
// (x + 0.044715 x^3), with neon::sigmoid (exp of a non-positive argument, no
// overflow, no cancellation for x << 0), as the AVX2 variant.
#include "kernels/arch.h"

#if ATTN_HAVE_NEON
#include "kernels/kernels_f32.h"
#include "kernels/neon/neon_f32.h"

namespace attn {
namespace detail {

void gelu_tanh_f32_neon(float* x, const float* up, int32_t n) {
  neon::map_times(x, up, n, [](float32x4_t v) {
    const float32x4_t v3 = vmulq_f32(vmulq_f32(v, v), v);
    const float32x4_t y = vmulq_n_f32(neon::mla(v, v3, vdupq_n_f32(0.044715f)), 0.797884560802865356f);
    return vmulq_f32(v, neon::sigmoid(vaddq_f32(y, y)));
  });
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON
