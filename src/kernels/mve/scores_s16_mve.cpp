// scores, int16, Cortex-M55 Helium (MVE): s = round(q k^T / 2^shift),
// scores_s16_ref's arithmetic, bit-exact.
//
// VMLALDAVA.S16 adds 8 products q[c] k[c] into a 64-bit accumulator exactly:
// ref's int64 sum (the products reach 2^30, so no 32-bit sum would do).
// head_dim <= 16: the query rows of a pass stay in registers (4 rows for
// head_dim <= 8, 2 for <= 16; zero past head_dim) and the loop over keys is
// per key one or two key loads (tail-predicated, never past K) and one
// VMLALDAVA per row and chunk; the accumulators start at the rounding half
// and the score is the sum shifted right. Wider heads: one row at a time,
// both operands loaded per chunk.
#include "kernels/arch.h"

#if ATTN_HAVE_MVE
#include <arm_mve.h>

#include "kernels/kernels_fixed.h"

#include <cstdint>

namespace attn {
namespace detail {
namespace {

// Rows [t, t + NR) of s (rows past nr repeat the last one: computed, stored
// first and then overwritten), head_dim <= 8 CH (kFull: head_dim = 8 CH,
// unpredicated loads).
template <size_t CH, size_t NR, bool kFull>
void rows_held(ConstMatS16 q, ConstMatS16 k, int64_t half, int32_t shift, MatS32 s, int32_t t, int32_t nr) {
  const int32_t d = q.cols;
  mve_pred16_t pred[CH];  // [chunk] lanes < head_dim
  for (size_t c = 0; c < CH; ++c) pred[c] = vctp16q(static_cast<uint32_t>(d - 8 * static_cast<int32_t>(c)));
  int16x8_t qv[NR][CH];  // [row][chunk] zero past head_dim
  int32_t* out[NR];      // [row] s[row, 0]
  for (size_t r = 0; r < NR; ++r) {
    const int32_t ri = static_cast<int32_t>(r);
    const int16_t* row = q.row(t + (ri < nr ? ri : nr - 1));  // [d]
    for (size_t c = 0; c < CH; ++c) qv[r][c] = vldrhq_z_s16(row + 8 * c, pred[c]);
    out[r] = s.row(t + (ri < nr ? ri : nr - 1));
  }
  const int16_t* kr = k.data;  // [d]
  ATTN_NO_UNROLL
  for (int32_t j = 0; j < k.rows; ++j, kr += k.stride) {
    int16x8_t kv[CH];
    for (size_t c = 0; c < CH; ++c)
      kv[c] = kFull ? vldrhq_s16(kr + 8 * c) : vldrhq_z_s16(kr + 8 * c, pred[c]);
    for (size_t i = NR; i-- > 0;) {  // row t last: the repeated rows store into it first
      int64_t a = half;
      for (size_t c = 0; c < CH; ++c) a = vmlaldavaq_s16(a, qv[i][c], kv[c]);
      out[i][j] = static_cast<int32_t>(a >> shift);
    }
  }
}

// Row t of s, any head_dim.
void row_any(ConstMatS16 q, ConstMatS16 k, int64_t half, int32_t shift, MatS32 s, int32_t t) {
  const int32_t d = q.cols;
  const int16_t* a = q.row(t);  // [d]
  int32_t* out = s.row(t);      // [S]
  for (int32_t j = 0; j < k.rows; ++j) {
    const int16_t* b = k.row(j);  // [d]
    int64_t acc = half;
    for (int32_t c = 0; c < d; c += 8) {
      const mve_pred16_t pred = vctp16q(static_cast<uint32_t>(d - c));
      acc = vmlaldavaq_p_s16(acc, vldrhq_z_s16(a + c, pred), vldrhq_z_s16(b + c, pred), pred);
    }
    out[j] = static_cast<int32_t>(acc >> shift);
  }
}

}  // namespace

void scores_s16_mve(ConstMatS16 q, ConstMatS16 k, int32_t score_shift, MatS32 s) {
  const int64_t half = score_shift > 0 ? int64_t{1} << (score_shift - 1) : 0;
  const int32_t d = q.cols;
  if (d == 8 || d == 16) {
    for (int32_t t = 0; t < q.rows; t += 2) {
      const int32_t nr = q.rows - t < 2 ? q.rows - t : 2;
      if (d == 8) {
        rows_held<1, 2, true>(q, k, half, score_shift, s, t, nr);
      } else {
        rows_held<2, 2, true>(q, k, half, score_shift, s, t, nr);
      }
    }
  } else if (d <= 8) {
    for (int32_t t = 0; t < q.rows; t += 4)
      rows_held<1, 4, false>(q, k, half, score_shift, s, t, q.rows - t < 4 ? q.rows - t : 4);
  } else if (d <= 16) {
    for (int32_t t = 0; t < q.rows; t += 2)
      rows_held<2, 2, false>(q, k, half, score_shift, s, t, q.rows - t < 2 ? q.rows - t : 2);
  } else {
    for (int32_t t = 0; t < q.rows; ++t) row_any(q, k, half, score_shift, s, t);
  }
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_MVE
