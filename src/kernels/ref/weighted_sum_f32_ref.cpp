// weighted sum, float32, portable scalar: o[T,d] = p[T,S] v[S,d].
#include "kernels/kernels_f32.h"

namespace attn {
namespace detail {

void weighted_sum_f32_ref(ConstMatF32 p, ConstMatF32 v, MatF32 o) {
  for (int32_t t = 0; t < p.rows; ++t) {
    const float* pr = p.row(t);  // [S]
    float* orow = o.row(t);      // [d]
    for (int32_t c = 0; c < v.cols; ++c) orow[c] = 0.0f;
    for (int32_t j = 0; j < p.cols; ++j) {
      const float pj = pr[j];
      if (pj == 0.0f) continue;    // masked keys add nothing
      const float* vr = v.row(j);  // [d]
      for (int32_t c = 0; c < v.cols; ++c) orow[c] += pj * vr[c];
    }
  }
}

}  // namespace detail
}  // namespace attn
