// scores, float32, NEON (AArch64 Advanced SIMD with FMA, and ARMv7-A): s[T,S] = q[T,d] k[S,d]^T * scale.
// scores() of kernels/neon/neon_f32.h: K^T panels and 4 query rows x 16 keys (ARMv7-A: 8)
// per block; dot_gemm with 4 x 4 blocks (ARMv7-A: 4 x 2) for fewer than 4 query rows.
// AArch64 has 32 quad registers and ARMv7-A 16.
#include "kernels/arch.h"

#if ATTN_HAVE_NEON
#include "kernels/kernels_f32.h"
#include "kernels/neon/neon_f32.h"

namespace attn {
namespace detail {

void scores_f32_neon(ConstMatF32 q, ConstMatF32 k, float scale, MatF32 s) {
  neon::scores<ATTN_HAVE_NEON64 ? 4 : 2, 4, ATTN_HAVE_NEON64 ? 4 : 2>(q, k, scale, s);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON
