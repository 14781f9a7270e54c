// linear into the transposed output, int8, portable scalar: yt [N, M] with
// yt[n, m] = linear_s8_ref's y[m, n] (V^T of forward_s8 where the kernel
// table keeps V transposed). Every channel, one linear_s8_ref output at a
// time: an oracle, not a fast path.
#include "kernels/kernels_fixed.h"

namespace attn {
namespace detail {

int32_t linear_s8_t_ref(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 yt) {
  for (int32_t n = 0; n < w.rows; ++n) {
    LinearS8Params pn = p;  // channel n's requantization
    pn.multiplier = p.multiplier + n;
    pn.shift = p.shift + n;
    for (int32_t m = 0; m < x.rows; ++m) {
      linear_s8_ref(x.rows_slice(m, 1), w.rows_slice(n, 1), bias != nullptr ? bias + n : nullptr, pn,
                    yt.rows_slice(n, 1).cols_slice(m, 1));
    }
  }
  return w.rows;
}

}  // namespace detail
}  // namespace attn
