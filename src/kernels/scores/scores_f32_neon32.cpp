// scores, float32, ARMv7-A NEON: s[T,S] = q[T,d] k[S,d]^T * scale.
// scores() of internal/neon_f32.h: K^T panels and 4 query rows x 8 keys
// per block; dot_gemm with 4 x 2 blocks for fewer than 4 query rows.
#include "internal/arch.h"

#if ATTN_HAVE_NEON32
#include "internal/kernels_f32.h"
#include "internal/neon_f32.h"

namespace attn {
namespace detail {

void scores_f32_neon32(ConstMatF32 q, ConstMatF32 k, float scale, MatF32 s) {
  neon::scores<2, 4, 2>(q, k, scale, s);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON32
