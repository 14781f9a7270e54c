// ReLU, float32, portable scalar, in place, times up when given:
//   x = max(x, 0) (* up); NaN stays NaN (as torch.relu).
#include "kernels/kernels_f32.h"

namespace attn {
namespace detail {

void relu_f32_ref(float* x, const float* up, int32_t n) {
  for (int32_t j = 0; j < n; ++j) {
    // NaN on its bits: clang-14's M55 code has taken NaN < 0 as true (see is_nan_bits).
    const float a = x[j] < 0.0f && !is_nan_bits(x[j]) ? 0.0f : x[j];
    x[j] = up != nullptr ? a * up[j] : a;
  }
}

}  // namespace detail
}  // namespace attn
