// scores, int8 and int16, portable scalar; one implementation for both dtypes:
//   s[t, j] = round_half_up(sum_c (q[t, c] - zq) (k[j, c] - zk) / 2^score_shift)
// int8: int32 sum (|sum| < 2^30 for d < 2^14), shift 0 for most models (the
// converter raises it only when a score step is too fine for the softmax
// multiplier); int16: int64 sum narrowed to int32 by the shift, symmetric
// (zero points 0).
#include <cstdint>

#include "attn/config.h"
#include "internal/fixed_point.h"
#include "internal/kernels_fixed.h"

namespace attn {
namespace detail {
namespace {

template <typename Act>
void scores_ref(Matrix<const Act> q, int32_t zq, Matrix<const Act> k, int32_t zk, int32_t score_shift,
                MatS32 s) {
  using Acc = typename fp::Accumulator<Act>::Acc;
  const Acc half = score_shift > 0 ? Acc{1} << (score_shift - 1) : 0;
  for (int32_t t = 0; t < q.rows; ++t) {
    const Act* qr = q.row(t);  // [d]
    int32_t* sr = s.row(t);    // [S]
    for (int32_t j = 0; j < k.rows; ++j) {
      const Act* kr = k.row(j);  // [d]
      Acc acc = 0;
      for (int32_t c = 0; c < q.cols; ++c) acc += (int32_t{qr[c]} - zq) * (int32_t{kr[c]} - zk);
      sr[j] = static_cast<int32_t>((acc + half) >> score_shift);
    }
  }
}

}  // namespace

#if ATTN_WITH_S8
void scores_s8_ref(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t score_shift, MatS32 s) {
  scores_ref(q, zq, k, zk, score_shift, s);
}
#endif
#if ATTN_WITH_S16
void scores_s16_ref(ConstMatS16 q, ConstMatS16 k, int32_t score_shift, MatS32 s) {
  scores_ref(q, 0, k, 0, score_shift, s);
}
#endif

}  // namespace detail
}  // namespace attn
