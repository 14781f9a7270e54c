// scores, int8, portable scalar: s[T,S] = sum_c (q[t,c] - zq) (k[j,c] - zk), int32.
#include "internal/kernels_fixed.h"

namespace attn {
namespace detail {

void scores_s8_ref(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, MatS32 s) {
  for (int32_t t = 0; t < q.rows; ++t) {
    const int8_t* qr = q.row(t);  // [d]
    int32_t* sr = s.row(t);       // [S]
    for (int32_t j = 0; j < k.rows; ++j) {
      const int8_t* kr = k.row(j);  // [d]
      int32_t acc = 0;
      for (int32_t c = 0; c < q.cols; ++c) acc += (int32_t{qr[c]} - zq) * (int32_t{kr[c]} - zk);
      sr[j] = acc;
    }
  }
}

}  // namespace detail
}  // namespace attn
