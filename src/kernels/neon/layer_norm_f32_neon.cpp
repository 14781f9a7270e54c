// LayerNorm over one row, float32, NEON (AArch64 and ARMv7-A): the ref's
// three passes (v = x + r and its sum; the centred squares; the scaled
// output), 4 lanes at a time with two accumulators, the last n % 4 scalar.
// Sums in another order than the ref's: within the bound of the variant
// tester (tests/variant_tester.h).
#include "kernels/arch.h"

#if ATTN_HAVE_NEON
#include <cmath>

#include "kernels/kernels_f32.h"
#include "kernels/neon/neon_f32.h"

namespace attn {
namespace detail {

void layer_norm_row_f32_neon(const float* x, const float* r, int32_t n, const float* w, const float* b,
                             float eps, float* y) {
  const float mean = neon::residual_sum<false>(x, r, n, y) / static_cast<float>(n);
  const int32_t n4 = n & ~3;
  const float32x4_t vmean = vdupq_n_f32(mean);
  float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0;
  int32_t j = 0;
  for (; j < n4; j += 4) {
    const float32x4_t d = vsubq_f32(vld1q_f32(y + j), vmean);
    if (j & 4) {
      s1 = neon::mla(s1, d, d);
    } else {
      s0 = neon::mla(s0, d, d);
    }
  }
  float squares = neon::hsum(vaddq_f32(s0, s1));
  for (; j < n; ++j) {
    const float d = y[j] - mean;
    squares += d * d;
  }
  const float rstd = 1.0f / std::sqrt(squares / static_cast<float>(n) + eps);
  for (j = 0; j < n4; j += 4) {
    const float32x4_t d = vmulq_n_f32(vsubq_f32(vld1q_f32(y + j), vmean), rstd);
    const float32x4_t wv = vld1q_f32(w + j);
    vst1q_f32(y + j, b != nullptr ? neon::mla(vld1q_f32(b + j), d, wv) : vmulq_f32(d, wv));
  }
  for (; j < n; ++j) {
    const float v = (y[j] - mean) * rstd * w[j];
    y[j] = b != nullptr ? v + b[j] : v;
  }
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON
