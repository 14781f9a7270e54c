// RMSNorm over one row, float32, portable scalar (HF Llama's LlamaRMSNorm):
//   v = x + r                 (the residual, when r is not null)
//   y = v / sqrt(sum(v^2) / n + eps) * w
// The bias argument is unused (the norm-row signature is LayerNorm's). y may
// be x or r: v is written to y first.
#include <cmath>

#include "kernels/kernels_f32.h"

namespace attn {
namespace detail {

void rms_norm_row_f32_ref(const float* x, const float* r, int32_t n, const float* w, const float* /*b*/,
                          float eps, float* y) {
  float squares = 0.0f;
  for (int32_t j = 0; j < n; ++j) {
    const float v = r != nullptr ? x[j] + r[j] : x[j];
    y[j] = v;
    squares += v * v;
  }
  const float rstd = 1.0f / std::sqrt(squares / static_cast<float>(n) + eps);
  for (int32_t j = 0; j < n; ++j) y[j] = y[j] * rstd * w[j];
}

}  // namespace detail
}  // namespace attn
