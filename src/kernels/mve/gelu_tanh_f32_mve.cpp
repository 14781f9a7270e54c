// GELU, tanh approximation, float32, Cortex-M55 Helium (MVE), in place, times up when given:
// kernels/activation_f32.h with this ISA's vector ops (kernels/mve/mve_f32.h).
#include "kernels/arch.h"

#if ATTN_HAVE_MVE_FP
#include "kernels/activation_f32.h"
#include "kernels/kernels_f32.h"
#include "kernels/mve/mve_f32.h"

namespace attn {
namespace detail {

void gelu_tanh_f32_mve(float* x, const float* up, int32_t n) {
  act::map_times<mve::MapOps>(x, up, n, act::GeluTanh<mve::MapOps>());
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_MVE_FP
