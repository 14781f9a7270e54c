// SiLU, float32, Cortex-M55 Helium (MVE), in place, times up when given
// (Llama's gate): x sigmoid(x), with mve::sigmoid (kernels/mve/mve_f32.h).
#include "kernels/arch.h"

#if ATTN_HAVE_MVE_FP
#include "kernels/kernels_f32.h"
#include "kernels/mve/mve_f32.h"

namespace attn {
namespace detail {

void silu_f32_mve(float* x, const float* up, int32_t n) {
  mve::map_times(x, up, n, [](float32x4_t v) { return vmulq_f32(v, mve::sigmoid(v)); });
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_MVE_FP
