// SiLU, float32, NEON (AArch64 and ARMv7-A), in place, times up when given
// (Llama's gate): x sigmoid(x), with neon::sigmoid (kernels/neon/neon_f32.h).
#include "kernels/arch.h"

#if ATTN_HAVE_NEON
#include "kernels/kernels_f32.h"
#include "kernels/neon/neon_f32.h"

namespace attn {
namespace detail {

void silu_f32_neon(float* x, const float* up, int32_t n) {
  neon::map_times(x, up, n, [](float32x4_t v) { return vmulq_f32(v, neon::sigmoid(v)); });
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON
