// GELU, tanh approximation, float32, Cortex-M55 Helium (MVE), in place, times
// up when given: x/2 (1 + tanh(y)) = x sigmoid(2y), y = sqrt(2/pi)
// (x + 0.044715 x^3), with mve::sigmoid (exp of a non-positive argument, no
// overflow, no cancellation for x << 0), as the AVX2 and NEON variants.
#include "kernels/arch.h"

#if ATTN_HAVE_MVE_FP
#include "kernels/kernels_f32.h"
#include "kernels/mve/mve_f32.h"

namespace attn {
namespace detail {

void gelu_tanh_f32_mve(float* x, const float* up, int32_t n) {
  mve::map_times(x, up, n, [](float32x4_t v) {
    const float32x4_t v3 = vmulq_f32(vmulq_f32(v, v), v);
    const float32x4_t y = vmulq_n_f32(vfmaq_n_f32(v, v3, 0.044715f), 0.797884560802865356f);
    return vmulq_f32(v, mve::sigmoid(vaddq_f32(y, y)));
  });
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_MVE_FP
