// linear, float32, NEON (AArch64 Advanced SIMD with FMA, and ARMv7-A): y[M,N] = x[M,K] w[N,K]^T + bias[N].
// dot_gemm of kernels/neon/neon_f32.h with 4 x 4 blocks on AArch64 (16 accumulators of its 32 quad
// registers) and 4 x 2 blocks on ARMv7-A (8 accumulators of its 16); one row of w at a time for a
// decode step on weights that come from memory (kernels/stream.h: the same bits).
#include "kernels/arch.h"

#if ATTN_HAVE_NEON
#include "kernels/kernels_f32.h"
#include "kernels/neon/neon_f32.h"
#include "kernels/stream.h"

namespace attn {
namespace detail {

void linear_f32_neon(ConstMatF32 x, ConstMatF32 w, const float* bias, MatF32 y) {
  const DotArgs g{w.data, w.stride, x.data, x.stride, x.cols, y.data, y.stride, bias, nullptr, 1.0f};
  constexpr size_t kCols = ATTN_HAVE_NEON64 ? 4 : 2;
  if (stream_weights(x.rows, w.rows, w.cols, sizeof(float)))
    return neon::dot_gemm_by_row<kCols>(g, w.rows, x.rows);
  neon::dot_gemm<kCols>(g, w.rows, x.rows);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON
