// scores, float32, portable scalar: s[T,S] = q[T,d] k[S,d]^T * scale.
#include "kernels/kernels_f32.h"

namespace attn {
namespace detail {

void scores_f32_ref(ConstMatF32 q, ConstMatF32 k, float scale, MatF32 s) {
  for (int32_t t = 0; t < q.rows; ++t) {
    const float* qr = q.row(t);  // [d]
    float* sr = s.row(t);        // [S]
    for (int32_t j = 0; j < k.rows; ++j) {
      const float* kr = k.row(j);  // [d]
      float acc = 0.0f;
      for (int32_t c = 0; c < q.cols; ++c) acc += qr[c] * kr[c];
      sr[j] = acc * scale;
    }
  }
}

}  // namespace detail
}  // namespace attn
