// linear, float32, ARMv7-A NEON: y[M,N] = x[M,K] w[N,K]^T + bias[N].
// dot_gemm of internal/neon_f32.h with 4 x 2 blocks (8 accumulators: 16 quad registers).
#include "internal/arch.h"

#if ATTN_HAVE_NEON32
#include "internal/kernels_f32.h"
#include "internal/neon_f32.h"

namespace attn {
namespace detail {

void linear_f32_neon32(ConstMatF32 x, ConstMatF32 w, const float* bias, MatF32 y) {
  const neon::DotArgs g{w.data, w.stride, x.data, x.stride, x.cols, y.data, y.stride, bias, nullptr, 1.0f};
  neon::dot_gemm<2>(g, w.rows, x.rows);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON32
