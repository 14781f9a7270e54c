// softmax over one row, float32, Cortex-M55 Helium (MVE), in place.
//
// Three passes as in the ref variant (max; exp and sum; scale), 4 lanes at a
// time; the last n % 4 entries are one tail-predicated vector (VCTP), its
// lanes past n set to -INFINITY (their exp is exactly 0, so the sum is
// unchanged) and stored predicated. The vector exp is mve::exp_nonpositive
// (kernels/mve/mve_f32.h): the AVX2 / NEON algorithm, -INFINITY (a masked score)
// gives exactly 0, a fully masked row gives all 0.
#include "kernels/arch.h"

#if ATTN_HAVE_MVE_FP
#include <arm_mve.h>

#include <cmath>

#include "kernels/kernels_f32.h"
#include "kernels/mve/mve_f32.h"

namespace attn {
namespace detail {

void softmax_row_f32_mve(float* row, int32_t n) {
  // A NaN score makes the row NaN, tested on the bits (row_has_nan): Helium's
  // float compares treat unordered pairs by condition, and the exp below must
  // not be relied on to carry a NaN.
  if (row_has_nan(row, n)) return softmax_row_nan(row, n);
  const int32_t n4 = n & ~3;
  const mve_pred16_t tail = vctp32q(static_cast<uint32_t>(n - n4));
  const float32x4_t ninf = vdupq_n_f32(-INFINITY);
  const float32x4_t xt = vpselq_f32(vldrwq_z_f32(row + n4, tail), ninf, tail);  // [n % 4], padded

  float32x4_t vmax = xt;
  for (int32_t j = 0; j < n4; j += 4) vmax = vmaxnmq_f32(vmax, vld1q_f32(row + j));
  const float max = vmaxnmvq_f32(-INFINITY, vmax);
  if (max == -INFINITY) {  // fully masked (or empty): all weights 0
    softmax_row_without_max(row, n);
    return;
  }

  float32x4_t sum = vdupq_n_f32(0.0f);
  for (int32_t j = 0; j < n4; j += 4) {
    const float32x4_t e = mve::exp_nonpositive(vsubq_n_f32(vld1q_f32(row + j), max));
    vst1q_f32(row + j, e);
    sum = vaddq_f32(sum, e);
  }
  const float32x4_t et = mve::exp_nonpositive(vsubq_n_f32(xt, max));  // padding lanes give 0
  sum = vaddq_f32(sum, et);

  // No add across float lanes in Helium: the 4 partial sums by hand. sum >= 1: the max entry gives exp(0).
  const float inv = 1.0f / ((vgetq_lane_f32(sum, 0) + vgetq_lane_f32(sum, 1)) +
                            (vgetq_lane_f32(sum, 2) + vgetq_lane_f32(sum, 3)));
  for (int32_t j = 0; j < n4; j += 4) vst1q_f32(row + j, vmulq_n_f32(vld1q_f32(row + j), inv));
  vstrwq_p_f32(row + n4, vmulq_n_f32(et, inv), tail);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_MVE_FP
