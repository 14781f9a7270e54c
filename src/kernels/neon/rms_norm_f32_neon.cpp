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
  const int32_t n4 = n & ~3;
  float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0;
  int32_t j = 0;
  for (; j < n4; j += 4) {
    float32x4_t v = vld1q_f32(x + j);
    if (r != nullptr) v = vaddq_f32(v, vld1q_f32(r + j));
    vst1q_f32(y + j, v);
    if (j & 4) {
      s1 = neon::mla(s1, v, v);
    } else {
      s0 = neon::mla(s0, v, v);
    }
  }
  float squares = neon::hsum(vaddq_f32(s0, s1));
  for (; j < n; ++j) {
    const float v = r != nullptr ? x[j] + r[j] : x[j];
    y[j] = v;
    squares += v * v;
  }
  const float rstd = 1.0f / std::sqrt(squares / static_cast<float>(n) + eps);
  for (j = 0; j < n4; j += 4)
    vst1q_f32(y + j, vmulq_f32(vmulq_n_f32(vld1q_f32(y + j), rstd), vld1q_f32(w + j)));
  for (; j < n; ++j) y[j] = y[j] * rstd * w[j];
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON
