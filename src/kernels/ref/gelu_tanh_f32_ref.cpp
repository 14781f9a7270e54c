// GELU, tanh approximation, float32, portable scalar, in place, times up when given:
//   x = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (* up)
// as HF "gelu_new" / "gelu_pytorch_tanh" and torch's approximate='tanh'.
#include <cmath>

#include "kernels/kernels_f32.h"

namespace attn {
namespace detail {

void gelu_tanh_f32_ref(float* x, const float* up, int32_t n) {
  for (int32_t j = 0; j < n; ++j) {
    const float v = x[j];
    const float a = 0.5f * v * (1.0f + std::tanh(0.797884560802865356f * (v + 0.044715f * v * v * v)));
    x[j] = up != nullptr ? a * up[j] : a;
  }
}

}  // namespace detail
}  // namespace attn
