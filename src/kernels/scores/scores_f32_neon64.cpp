// scores, float32, AArch64 Advanced SIMD (FMA): s[T,S] = q[T,d] kt[d,S] * scale.
// nn_gemm of internal/neon_f32.h: 6 query rows x 16 keys per block.
#include "internal/arch.h"

#if ATTN_HAVE_NEON64
#include "internal/kernels_f32.h"
#include "internal/neon_f32.h"

namespace attn {
namespace detail {

void scores_f32_neon64(ConstMatF32 q, ConstMatF32 kt, float scale, MatF32 s) {
  const neon::NnArgs g{q.data, q.stride, kt.data, kt.stride, q.cols, scale, s.data, s.stride};
  neon::nn_gemm<6, 4>(g, q.rows, kt.cols);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON64
