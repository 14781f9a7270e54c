// scores, float32, portable scalar: s[T,S] = q[T,d] kt[d,S] * scale.
#include "internal/kernels_f32.h"

namespace attn {
namespace detail {

void scores_f32_ref(ConstMatF32 q, ConstMatF32 kt, float scale, MatF32 s) {
  for (int32_t t = 0; t < q.rows; ++t) {
    const float* qr = q.row(t);  // [d]
    float* sr = s.row(t);        // [S]
    for (int32_t j = 0; j < kt.cols; ++j) sr[j] = 0.0f;
    for (int32_t c = 0; c < q.cols; ++c) {
      const float qc = qr[c];
      const float* kr = kt.row(c);  // [S]: feature c of every key
      for (int32_t j = 0; j < kt.cols; ++j) sr[j] += qc * kr[j];
    }
    for (int32_t j = 0; j < kt.cols; ++j) sr[j] *= scale;
  }
}

}  // namespace detail
}  // namespace attn
