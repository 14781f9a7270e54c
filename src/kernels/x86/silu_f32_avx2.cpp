// SiLU, float32, x86-64 AVX2/FMA, in place, times up when given:
// kernels/activation_f32.h with this ISA's vector ops (kernels/x86/avx2_f32.h).
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2
#include "kernels/activation_f32.h"
#include "kernels/kernels_f32.h"
#include "kernels/x86/avx2_f32.h"

namespace attn {
namespace detail {

void silu_f32_avx2(float* x, const float* up, int32_t n) {
  act::map_times<avx2::MapOps>(x, up, n, act::Silu<avx2::MapOps>());
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
