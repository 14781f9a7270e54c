// SiLU, float32, portable scalar, in place, times up when given:
//   x = x / (1 + exp(-x)) (* up)
// Llama's gated FFN: act(gate_proj n) * up_proj n. exp(-x) overflows to
// +inf for x below about -88.7, and x / inf is -0: the limit.
#include <cmath>

#include "kernels/kernels_f32.h"

namespace attn {
namespace detail {

void silu_f32_ref(float* x, const float* up, int32_t n) {
  for (int32_t j = 0; j < n; ++j) {
    const float v = x[j];
    const float a = v / (1.0f + std::exp(-v));
    x[j] = up != nullptr ? a * up[j] : a;
  }
}

}  // namespace detail
}  // namespace attn
