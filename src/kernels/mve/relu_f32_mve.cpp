// ReLU, float32, Cortex-M55 Helium (MVE), in place, times up when given:
// x < 0 ? 0 : x as the ref, NaN stays NaN. Not by a float compare: VMAXNM
// turns a NaN into 0, and clang 14 lowers both x < 0 and 0 > x to VCMP's
// "lt", which is true for an unordered pair (the board's NaN cases caught
// both). An integer compare of the bits instead: a float below -0 that is
// not NaN has bits, as int32, at most those of -inf (0xFF800000); -NaN's
// are above, positive NaN's positive. (-0 becomes +0, equal in value.)
#include "kernels/arch.h"

#if ATTN_HAVE_MVE_FP
#include "kernels/activation_f32.h"
#include "kernels/kernels_f32.h"
#include "kernels/mve/mve_f32.h"

namespace attn {
namespace detail {

void relu_f32_mve(float* x, const float* up, int32_t n) {
  act::map_times<mve::MapOps>(x, up, n, [](float32x4_t v) {
    const mve_pred16_t neg = vcmpleq_n_s32(vreinterpretq_s32_f32(v), static_cast<int32_t>(0xFF800000u));
    return vpselq_f32(vdupq_n_f32(0.0f), v, neg);
  });
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_MVE_FP
