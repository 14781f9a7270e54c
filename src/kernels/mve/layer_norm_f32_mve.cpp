// LayerNorm over one row, float32, Cortex-M55 Helium (MVE): the ref's three
// passes (v = x + r and its sum; the centred squares; the scaled output), 4
// lanes at a time, the tail predicated (VCTP; absent lanes load as 0 and the
// centred squares zero them). Sums in another order than the ref's: within
// the bound of the variant tester (tests/variant_tester.h).
#include "kernels/arch.h"

#if ATTN_HAVE_MVE_FP
#include <cmath>

#include "kernels/kernels_f32.h"
#include "kernels/mve/mve_f32.h"

namespace attn {
namespace detail {

void layer_norm_row_f32_mve(const float* x, const float* r, int32_t n, const float* w, const float* b,
                            float eps, float* y) {
  const float mean = mve::hsum(mve::residual_sums<false>(x, r, n, y)) / static_cast<float>(n);
  float32x4_t vsq = vdupq_n_f32(0.0f);
  for (int32_t j = 0; j < n; j += 4) {
    const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n - j));
    const float32x4_t d = vpselq_f32(vsubq_n_f32(vldrwq_z_f32(y + j, p), mean), vdupq_n_f32(0.0f), p);
    vsq = vfmaq_f32(vsq, d, d);
  }
  const float rstd = 1.0f / std::sqrt(mve::hsum(vsq) / static_cast<float>(n) + eps);
  for (int32_t j = 0; j < n; j += 4) {
    const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n - j));
    const float32x4_t d = vmulq_n_f32(vsubq_n_f32(vldrwq_z_f32(y + j, p), mean), rstd);
    const float32x4_t wv = vldrwq_z_f32(w + j, p);
    vstrwq_p_f32(y + j, b != nullptr ? vfmaq_f32(vldrwq_z_f32(b + j, p), d, wv) : vmulq_f32(d, wv), p);
  }
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_MVE_FP
