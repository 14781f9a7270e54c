// linear, float32, x86-64 AVX2/FMA: y[M,N] = x[M,K] w[N,K]^T + bias[N].
//
// Both operands are read along K, as PyTorch stores them: no packing, any
// stride. dot_gemm of internal/avx2_f32.h with a = w (4 output columns per
// 128-bit result, bias along them) and b = x (3 rows at a time).
#include "internal/arch.h"

#if ATTN_HAVE_AVX2
#include "internal/avx2_f32.h"
#include "internal/kernels_f32.h"

namespace attn {
namespace detail {

void linear_f32_avx2(ConstMatF32 x, ConstMatF32 w, const float* bias, MatF32 y) {
  const avx2::DotArgs g{w.data, w.stride, x.data, x.stride, x.cols, y.data, y.stride, bias, nullptr, 1.0f};
  avx2::dot_gemm(g, w.rows, x.rows);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
