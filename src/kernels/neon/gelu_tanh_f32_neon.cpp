// GELU, tanh approximation, float32, NEON (AArch64 and ARMv7-A), in place, times up when given:
// kernels/activation_f32.h with this ISA's vector ops (kernels/neon/neon_f32.h).
#include "kernels/arch.h"

#if ATTN_HAVE_NEON
#include "kernels/activation_f32.h"
#include "kernels/kernels_f32.h"
#include "kernels/neon/neon_f32.h"

namespace attn {
namespace detail {

void gelu_tanh_f32_neon(float* x, const float* up, int32_t n) {
  act::map_times<neon::MapOps>(x, up, n, act::GeluTanh<neon::MapOps>());
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON
