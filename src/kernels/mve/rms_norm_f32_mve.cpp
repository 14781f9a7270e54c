// RMSNorm over one row, float32, Cortex-M55 Helium (MVE): the ref's two
// passes (v = x + r and its squares; the scaled output), 4 lanes at a time,
// the tail predicated (VCTP; absent lanes load as 0). The bias argument is
// unused.
#include "kernels/arch.h"

#if ATTN_HAVE_MVE_FP
#include <cmath>

#include "kernels/kernels_f32.h"
#include "kernels/mve/mve_f32.h"

namespace attn {
namespace detail {

void rms_norm_row_f32_mve(const float* x, const float* r, int32_t n, const float* w, const float* /*b*/,
                          float eps, float* y) {
  const float rstd =
      1.0f / std::sqrt(mve::hsum(mve::residual_sums<true>(x, r, n, y)) / static_cast<float>(n) + eps);
  for (int32_t j = 0; j < n; j += 4) {
    const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n - j));
    const float32x4_t v = vmulq_n_f32(vldrwq_z_f32(y + j, p), rstd);
    vstrwq_p_f32(y + j, vmulq_f32(v, vldrwq_z_f32(w + j, p)), p);
  }
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_MVE_FP
