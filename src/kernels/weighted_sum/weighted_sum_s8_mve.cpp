// weighted sum, int8 values, Q0.15 probabilities, Cortex-M55 Helium (MVE):
// o[t, c] = requant(sum_j p[t, j] v[j, c] - zv sum_j p[t, j]).
//
// Per value column c and up to four rows t, the sum over j runs 8 keys at a
// time: one gather load (VLDRB.S16 with offsets 0, stride, .., 7 stride)
// brings v[j .. j + 8, c] widened to int16, and one VMLADAVA.S16 per row
// multiplies it with p[t, j .. j + 8] and accumulates the 8 products (int32).
// The last, partial chunk is tail-predicated (VCTP). Column sums go to a
// stack array, then each row is requantized 4 columns per vector and stored
// as contiguous bytes. Rows too far apart for 16-bit gather offsets take the
// older path: four columns per int32 vector, VMLA by the scalar p[t, j].
// The sums equal the ref's int32 sums: bit-exact.
#include "internal/arch.h"

#if ATTN_HAVE_MVE
#include <arm_mve.h>

#include "internal/kernels_fixed.h"
#include "internal/mve_requantize.h"

#if defined(__clang__)
#define ATTN_NO_UNROLL _Pragma("clang loop unroll(disable)")
#else
#define ATTN_NO_UNROLL
#endif

namespace attn {
namespace detail {
namespace {

constexpr int32_t kGroup = 16;              // value columns per pass (stack: 4 x 16 int32 sums)
constexpr int32_t kMaxGatherStride = 9362;  // 7 * stride must fit the 16-bit gather offsets

// o[t, c0 .. c0 + nc) = requant(acc[0 .. nc)), 4 columns per vector.
inline void store_row(const int32_t* acc, int32_t nc, int32_t m, int32_t sh, int32_t zo, int8_t* out) {
  const int32x4_t lo = vdupq_n_s32(-128);
  const int32x4_t hi = vdupq_n_s32(127);
  ATTN_NO_UNROLL  // unrolled, clang-14 spills the two constants once per copy (~180 instructions a call)
      for (int32_t j = 0; j < nc; j += 4) {
    const mve_pred16_t live = vctp32q(static_cast<uint32_t>(nc - j));
    int32x4_t v = vaddq_n_s32(mve::requantize(vldrwq_s32(acc + j), m, sh), zo);
    v = vminq_s32(vmaxq_s32(v, lo), hi);
    vstrbq_p_s32(out + j, v, live);  // int8, truncating
  }
}

// Rows t .. t + nr - 1 (nr <= 4), v.stride <= kMaxGatherStride. Per value
// column each 8-key step is 1 gather, 4 probability loads straight from the
// rows of p (post-incremented pointers), 4 VMLADAVA.S16; the last 1..7 keys
// one predicated step. The gathered values are v - zv (int16), so the sums
// are the ref's sum_j p (v - zv) directly. Rows >= nr (kFull false) repeat
// row nr - 1 and are not stored.
template <bool kFull>  // nr == 4, known at compile time
void rows_gather(ConstMatS16 p, ConstMatS8 v, int32_t zv, int32_t m, int32_t sh, int32_t zo, MatS8 o,
                 int32_t t, int32_t nr_any) {
  const int32_t nr = kFull ? 4 : nr_any;
  const int32_t S = p.cols;
  const int32_t full = S & ~7;  // keys in whole 8-key steps
  const mve_pred16_t tail = vctp16q(static_cast<uint32_t>(S - full));
  const uint16x8_t offsets = vmulq_n_u16(vidupq_n_u16(0, 1), static_cast<uint16_t>(v.stride));
  const ptrdiff_t step = 8 * static_cast<ptrdiff_t>(v.stride);  // bytes between 8-key steps of a column
  const int16_t zv16 = static_cast<int16_t>(zv);                // v - zv in [-255, 255]: exact in int16
  const int16_t* rows[4];                                       // [4] probability rows [S]
  for (int32_t r = 0; r < 4; ++r) rows[r] = p.row(t + (r < nr ? r : nr - 1));
  alignas(16) int32_t acc[4][kGroup];  // [row][column] int32 sums of this column group
  for (int32_t c0 = 0; c0 < v.cols; c0 += kGroup) {
    const int32_t nc = v.cols - c0 < kGroup ? v.cols - c0 : kGroup;
    const int8_t* col = v.data + c0;  // v[0, c0]
    ATTN_NO_UNROLL
    for (int32_t c = 0; c < nc; ++c, ++col) {
      int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
      const int16_t *p0 = rows[0], *p1 = rows[1], *p2 = rows[2], *p3 = rows[3];
      const int8_t* vb = col;
      for (int32_t j = 0; j < full; j += 8, vb += step) {
        const int16x8_t vv = vsubq_n_s16(vldrbq_gather_offset_s16(vb, offsets), zv16);
        a0 = vmladavaq_s16(a0, vldrhq_s16(p0), vv);
        a1 = vmladavaq_s16(a1, vldrhq_s16(p1), vv);
        a2 = vmladavaq_s16(a2, vldrhq_s16(p2), vv);
        a3 = vmladavaq_s16(a3, vldrhq_s16(p3), vv);
        p0 += 8, p1 += 8, p2 += 8, p3 += 8;
      }
      if (full < S) {  // the last 1..7 keys
        const int16x8_t vv = vsubq_n_s16(vldrbq_gather_offset_z_s16(vb, offsets, tail), zv16);
        a0 = vmladavaq_p_s16(a0, vldrhq_z_s16(p0, tail), vv, tail);
        a1 = vmladavaq_p_s16(a1, vldrhq_z_s16(p1, tail), vv, tail);
        a2 = vmladavaq_p_s16(a2, vldrhq_z_s16(p2, tail), vv, tail);
        a3 = vmladavaq_p_s16(a3, vldrhq_z_s16(p3, tail), vv, tail);
      }
      acc[0][c] = a0;
      acc[1][c] = a1;
      acc[2][c] = a2;
      acc[3][c] = a3;
    }
    ATTN_NO_UNROLL
    for (int32_t r = 0; r < nr; ++r) store_row(acc[r], nc, m, sh, zo, o.row(t + r) + c0);
  }
}

// Any row stride (row t): four value columns per int32 vector, VMLA by the scalar p[t, j].
void row_any(ConstMatS16 p, ConstMatS8 v, int32_t zv, int32_t m, int32_t sh, int32_t zo, MatS8 o, int32_t t) {
  const int32_t S = p.cols;
  const int16_t* pr = p.row(t);  // [S]
  int32_t psum = 0;
  for (int32_t j = 0; j < S; j += 8) {
    const mve_pred16_t pred = vctp16q(static_cast<uint32_t>(S - j));
    psum = vaddvaq_p_s16(psum, vldrhq_z_s16(pr + j, pred), pred);
  }
  for (int32_t c = 0; c < v.cols; c += 4) {
    const mve_pred16_t pred = vctp32q(static_cast<uint32_t>(v.cols - c));
    int32x4_t acc = vdupq_n_s32(-zv * psum);
    const int8_t* vc = v.data + c;  // columns [c, c + 4) of row 0
    for (int32_t j = 0; j < S; ++j, vc += v.stride) acc = vmlaq_n_s32(acc, vldrbq_z_s32(vc, pred), pr[j]);
    int32x4_t out = vaddq_n_s32(mve::requantize(acc, m, sh), zo);
    out = vminq_s32(vmaxq_s32(out, vdupq_n_s32(-128)), vdupq_n_s32(127));
    vstrbq_p_s32(o.row(t) + c, out, pred);  // int8, truncating
  }
}

}  // namespace

void weighted_sum_s8_mve(ConstMatS16 p, ConstMatS8 v, int32_t zv, int32_t m, int32_t sh, int32_t zo,
                         MatS8 o) {
  if (v.stride > kMaxGatherStride) {
    for (int32_t t = 0; t < p.rows; ++t) row_any(p, v, zv, m, sh, zo, o, t);
    return;
  }
  // Blocks of 4 rows; the last block's missing rows are zero probabilities, not stored.
  int32_t t = 0;
  for (; t + 4 <= p.rows; t += 4) rows_gather<true>(p, v, zv, m, sh, zo, o, t, 4);
  if (t < p.rows) rows_gather<false>(p, v, zv, m, sh, zo, o, t, p.rows - t);
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_MVE
