// weighted sum, float32, x86-64 AVX2/FMA: o[T,d] = p[T,S] v[S,d].
// The broadcast product of kernels/x86/avx2_f32.h: 6 rows x 16 columns per block.
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2
#include "kernels/kernels_f32.h"
#include "kernels/x86/avx2_f32.h"

namespace attn {
namespace detail {

void weighted_sum_f32_avx2(ConstMatF32 p, ConstMatF32 v, MatF32 o) {
  const NnArgs g{p.data, p.stride, v.data, v.stride, p.cols, 1.0f, o.data, o.stride};
  avx2::nn_gemm(g, p.rows, v.cols);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
