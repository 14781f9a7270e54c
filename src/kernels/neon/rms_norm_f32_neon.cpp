// RMSNorm over one row, float32, NEON (AArch64 and ARMv7-A): the ref's two
// passes (v = x + r and its squares; the scaled output), 4 lanes at a time
// with two accumulators, the last n % 4 scalar. The bias argument is unused.
#include "kernels/arch.h"

#if ATTN_HAVE_NEON
#include <cmath>

#include "kernels/kernels_f32.h"
#include "kernels/neon/neon_f32.h"

namespace attn {
namespace detail {

void rms_norm_row_f32_neon(const float* x, const float* r, int32_t n, const float* w, const float* /*b*/,
                           float eps, float* y) {
  const float squares = neon::residual_sum<true>(x, r, n, y);
  const float rstd = 1.0f / std::sqrt(squares / static_cast<float>(n) + eps);
  const int32_t n4 = n & ~3;
  int32_t j = 0;
  for (; j < n4; j += 4) vst1q_f32(y + j, vmulq_f32(vmulq_n_f32(vld1q_f32(y + j), rstd), vld1q_f32(w + j)));
  for (; j < n; ++j) y[j] = y[j] * rstd * w[j];
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON
