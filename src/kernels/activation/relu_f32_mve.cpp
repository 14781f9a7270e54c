// ReLU, float32, Cortex-M55 Helium (MVE), in place, times up when given:
// x < 0 ? 0 : x by a compare and a select, as the ref (VMAXNM would turn a
// NaN into 0). The compare is 0 > x: false for NaN, which stays (VCMP's
// "lt" would be true for an unordered pair).
#include "internal/arch.h"

#if ATTN_HAVE_MVE_FP
#include "internal/kernels_f32.h"
#include "internal/mve_f32.h"

namespace attn {
namespace detail {

void relu_f32_mve(float* x, const float* up, int32_t n) {
  mve::map_times(x, up, n, [](float32x4_t v) {
    return vpselq_f32(vdupq_n_f32(0.0f), v, vcmpgtq_f32(vdupq_n_f32(0.0f), v));
  });
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_MVE_FP
