// scores, int16, portable scalar: s[T,S] = round(sum_c q[t,c] k[j,c] / 2^shift),
// int64 sum, rounded half up to int32.
#include "kernels/kernels_fixed.h"

namespace attn {
namespace detail {

void scores_s16_ref(ConstMatS16 q, ConstMatS16 k, int32_t score_shift, MatS32 s) {
  const int64_t half = score_shift > 0 ? int64_t{1} << (score_shift - 1) : 0;
  for (int32_t t = 0; t < q.rows; ++t) {
    const int16_t* qr = q.row(t);  // [d]
    int32_t* sr = s.row(t);        // [S]
    for (int32_t j = 0; j < k.rows; ++j) {
      const int16_t* kr = k.row(j);  // [d]
      int64_t acc = 0;
      for (int32_t c = 0; c < q.cols; ++c) acc += int32_t{qr[c]} * int32_t{kr[c]};
      sr[j] = static_cast<int32_t>((acc + half) >> score_shift);
    }
  }
}

}  // namespace detail
}  // namespace attn
