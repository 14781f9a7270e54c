// scores, float32, AArch64 Advanced SIMD (FMA): s[T,S] = q[T,d] k[S,d]^T * scale.
// scores() of internal/neon_f32.h: K^T panels and 4 query rows x 16 keys
// per block; dot_gemm with 4 x 4 blocks for fewer than 4 query rows.
#include "internal/arch.h"

#if ATTN_HAVE_NEON64
#include "internal/kernels_f32.h"
#include "internal/neon_f32.h"

namespace attn {
namespace detail {

void scores_f32_neon64(ConstMatF32 q, ConstMatF32 k, float scale, MatF32 s) {
  neon::scores<4, 4, 4>(q, k, scale, s);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON64
