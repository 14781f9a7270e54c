// GELU (exact, erf), float32, portable scalar, in place, times up when given:
//   x = x/2 (1 + erf(x / sqrt 2)) (* up)
// as torch.nn.functional.gelu (approximate='none') and HF "gelu" compute it.
#include <cmath>

#include "kernels/kernels_f32.h"

namespace attn {
namespace detail {

void gelu_f32_ref(float* x, const float* up, int32_t n) {
  for (int32_t j = 0; j < n; ++j) {
    const float v = x[j];
    const float a = 0.5f * v * (1.0f + std::erf(v * 0.707106781186547524f));
    x[j] = up != nullptr ? a * up[j] : a;
  }
}

}  // namespace detail
}  // namespace attn
