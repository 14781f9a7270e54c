// scores, int8, portable scalar: s[T,S] = round(sum_c (q[t,c] - zq) (k[j,c] - zk) / 2^shift),
// int32 sum, rounded half up (shift 0 for most models: the converter raises it
// only when a score step is too fine for the softmax multiplier).
#include "kernels/kernels_fixed.h"

namespace attn {
namespace detail {

void scores_s8_ref(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t score_shift, MatS32 s) {
  const int32_t half = score_shift > 0 ? int32_t{1} << (score_shift - 1) : 0;
  for (int32_t t = 0; t < q.rows; ++t) {
    const int8_t* qr = q.row(t);  // [d]
    int32_t* sr = s.row(t);       // [S]
    for (int32_t j = 0; j < k.rows; ++j) {
      const int8_t* kr = k.row(j);  // [d]
      int32_t acc = 0;
      for (int32_t c = 0; c < q.cols; ++c) acc += (int32_t{qr[c]} - zq) * (int32_t{kr[c]} - zk);
      sr[j] = (acc + half) >> score_shift;
    }
  }
}

}  // namespace detail
}  // namespace attn
