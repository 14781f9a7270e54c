// scores, int8, Cortex-M DSP extension: s = round((q - zq)(k - zk)^T / 2^shift),
// four query rows at a time, expanded once to SMLAD pairs; each key word is
// unpacked once for the four rows (dsp::dot4_expanded). The last T % 4 rows and
// head_dim > dsp::kExpandMaxK go through scores_s8_ref. Same int32 sums as
// scores_s8_ref: bit-exact.
#include "internal/arch.h"

#if ATTN_HAVE_DSP
#include "internal/dsp_s8.h"
#include "internal/kernels_fixed.h"

namespace attn {
namespace detail {
namespace {

// Rows [t, t + 4) of s, q expanded once (d <= dsp::kExpandMaxK). The key
// zero point is folded: sum (q - zq)(k - zk) = sum (q - zq) k - zk sum (q - zq).
void rows4(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t half, int32_t shift, MatS32 s,
           int32_t t) {
  const int32_t d = q.cols;
  const int32_t d4 = d & ~3;
  int32_t buf[2 * dsp::kExpandMaxK];  // [d / 4][4 rows][even, odd] int16 pairs
  const int8_t* a[4] = {q.row(t), q.row(t + 1), q.row(t + 2), q.row(t + 3)};  // [d]
  dsp::expand4(a, d4, zq, buf);
  int32_t corr[4];  // -zk * sum_{c < d4} (q[c] - zq)
  for (size_t r = 0; r < 4; ++r) {
    int32_t sum = 0;
    for (int32_t c = 0; c < d4; ++c) sum += int32_t{a[r][c]} - zq;
    corr[r] = -zk * sum;
  }
  int32_t* out[4] = {s.row(t), s.row(t + 1), s.row(t + 2), s.row(t + 3)};  // [S]
  for (int32_t j = 0; j < k.rows; ++j) {
    const int8_t* b = k.row(j);  // [d]
    int32_t acc[4] = {corr[0], corr[1], corr[2], corr[3]};
    dsp::dot4_expanded(buf, b, d4, acc);
    for (int32_t c = d4; c < d; ++c) {
      for (size_t r = 0; r < 4; ++r) acc[r] += (int32_t{a[r][c]} - zq) * (int32_t{b[c]} - zk);
    }
    for (size_t r = 0; r < 4; ++r) out[r][j] = (acc[r] + half) >> shift;
  }
}

}  // namespace

void scores_s8_dsp(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t score_shift, MatS32 s) {
  if (q.cols > dsp::kExpandMaxK) {
    scores_s8_ref(q, zq, k, zk, score_shift, s);
    return;
  }
  const int32_t half = score_shift > 0 ? int32_t{1} << (score_shift - 1) : 0;
  const int32_t t4 = q.rows & ~3;
  for (int32_t t = 0; t < t4; t += 4) rows4(q, zq, k, zk, half, score_shift, s, t);
  if (t4 < q.rows)
    scores_s8_ref(q.rows_slice(t4, q.rows - t4), zq, k, zk, score_shift, s.rows_slice(t4, s.rows - t4));
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_DSP
