// linear, float32, portable scalar: y[M,N] = x[M,K] w[N,K]^T + bias[N].
#include "kernels/kernels_f32.h"

namespace attn {
namespace detail {

void linear_f32_ref(ConstMatF32 x, ConstMatF32 w, const float* bias, MatF32 y) {
  for (int32_t m = 0; m < x.rows; ++m) {
    const float* xr = x.row(m);  // [K]
    float* yr = y.row(m);        // [N]
    for (int32_t n = 0; n < w.rows; ++n) {
      const float* wr = w.row(n);  // [K]
      float acc = bias != nullptr ? bias[n] : 0.0f;
      for (int32_t k = 0; k < x.cols; ++k) acc += xr[k] * wr[k];
      yr[n] = acc;
    }
  }
}

}  // namespace detail
}  // namespace attn
