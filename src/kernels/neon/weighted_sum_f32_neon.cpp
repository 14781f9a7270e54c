// weighted sum, float32, NEON (AArch64 Advanced SIMD with FMA, and ARMv7-A): o[T,d] = p[T,S] v[S,d].
// nn_gemm of kernels/neon/neon_f32.h: 4 rows x 16 columns per block on AArch64 (32 quad
// registers), 4 rows x 8 columns on ARMv7-A (16).
#include "kernels/arch.h"

#if ATTN_HAVE_NEON
#include "kernels/kernels_f32.h"
#include "kernels/neon/neon_f32.h"

namespace attn {
namespace detail {

void weighted_sum_f32_neon(ConstMatF32 p, ConstMatF32 v, MatF32 o) {
  const NnArgs g{p.data, p.stride, v.data, v.stride, p.cols, 1.0f, o.data, o.stride};
  neon::nn_gemm<4, ATTN_HAVE_NEON64 ? 4 : 2>(g, p.rows, v.cols);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON
