// LayerNorm over one row, float32, portable scalar (PyTorch's
// nn.LayerNorm: biased variance, eps inside the square root):
//   v = x + r                 (the residual, when r is not null)
//   mean = sum(v) / n,  var = sum((v - mean)^2) / n
//   y = (v - mean) / sqrt(var + eps) * w + b     (b may be null)
// Two passes over v (mean, then the centred squares), so the variance
// suffers no cancellation. y may be x or r: v is written to y first.
#include <cmath>

#include "kernels/kernels_f32.h"

namespace attn {
namespace detail {

void layer_norm_row_f32_ref(const float* x, const float* r, int32_t n, const float* w, const float* b,
                            float eps, float* y) {
  float sum = 0.0f;
  for (int32_t j = 0; j < n; ++j) {
    const float v = r != nullptr ? x[j] + r[j] : x[j];
    y[j] = v;
    sum += v;
  }
  const float mean = sum / static_cast<float>(n);
  float squares = 0.0f;
  for (int32_t j = 0; j < n; ++j) {
    const float d = y[j] - mean;
    squares += d * d;
  }
  const float rstd = 1.0f / std::sqrt(squares / static_cast<float>(n) + eps);
  for (int32_t j = 0; j < n; ++j) {
    const float v = (y[j] - mean) * rstd * w[j];
    y[j] = b != nullptr ? v + b[j] : v;
  }
}

}  // namespace detail
}  // namespace attn
