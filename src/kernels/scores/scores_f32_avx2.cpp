// scores, float32, x86-64 AVX2/FMA: s[T,S] = q[T,d] kt[d,S] * scale.
// K arrives transposed (forward() projects it as K^T), so this is the
// broadcast product of internal/avx2_f32.h: 6 query rows x 16 keys per block.
#include "internal/arch.h"

#if ATTN_HAVE_AVX2
#include "internal/avx2_f32.h"
#include "internal/kernels_f32.h"

namespace attn {
namespace detail {

void scores_f32_avx2(ConstMatF32 q, ConstMatF32 kt, float scale, MatF32 s) {
  const avx2::NnArgs g{q.data, q.stride, kt.data, kt.stride, q.cols, scale, s.data, s.stride};
  avx2::nn_gemm(g, q.rows, kt.cols);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
