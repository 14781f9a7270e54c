// weighted sum, float32, AArch64 Advanced SIMD (FMA): o[T,d] = p[T,S] v[S,d].
// nn_gemm of internal/neon_f32.h: 4 rows x 16 columns per block.
#include "internal/arch.h"

#if ATTN_HAVE_NEON64
#include "internal/kernels_f32.h"
#include "internal/neon_f32.h"

namespace attn {
namespace detail {

void weighted_sum_f32_neon64(ConstMatF32 p, ConstMatF32 v, MatF32 o) {
  const neon::NnArgs g{p.data, p.stride, v.data, v.stride, p.cols, 1.0f, o.data, o.stride};
  neon::nn_gemm<4, 4>(g, p.rows, v.cols);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON64
