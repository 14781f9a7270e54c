// weighted sum, int8 values, Q0.15 probabilities, Cortex-M55 Helium (MVE):
// o[t, c] = requant(sum_j p[t, j] v[j, c] - zv sum_j p[t, j]).
//
// Per two rows t and two value columns c, the sum over j runs 8 keys at a
// time: one gather load per column (VLDRB.S16 with offsets 0, stride, ..,
// 7 stride) brings v[j .. j + 8, c] widened to int16, one load per row
// brings p[t, j .. j + 8] straight from P, and one VMLADAVA.S16 per (row,
// column) accumulates the 8 products (int32). The last, partial chunk is
// predicated (VCTP). Column sums go to a stack array, then each row is
// requantized 4 columns per vector and stored as contiguous bytes. Rows too
// far apart for 16-bit gather offsets take the older path: four columns per
// int32 vector, VMLA by the scalar p[t, j]. The sums equal the ref's int32
// sums: bit-exact.
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

// o[t + r, c0 .. c0 + nc) for r < nr (nr <= 4), v.stride <= kMaxGatherStride.
// Two rows by two value columns at a time: per 8-key step, 2 probability
// loads straight from the rows of p (post-incremented pointers), 2 gathers
// (VLDRB.S16, offsets 0, stride, .., 7 stride from the column), 4
// VMLADAVA.S16 (10 instructions with the loop's, for 32 products); the last
// 1..7 keys one step with predicated loads (zero probabilities past S). A
// missing second row or column repeats the last one (same sums, same slot).
// The zv term: kPsum, -zv sum_j p[t + r, j] added to the sums (one pass over
// each row of p: cheaper from 8 columns on); else the gathered values are
// v - zv (exact in int16, one VSUB per gather). Either way the sums are the
// ref's int32 sums sum_j p (v - zv).
template <bool kPsum>
void rows_gather(ConstMatS16 p, ConstMatS8 v, int32_t zv, int32_t m, int32_t sh, int32_t zo, MatS8 o,
                 int32_t t, int32_t nr) {
  const int32_t S = p.cols;
  const int32_t full = S & ~7;  // keys in whole 8-key steps
  const mve_pred16_t tail = vctp16q(static_cast<uint32_t>(S - full));
  const uint16x8_t offsets = vmulq_n_u16(vidupq_n_u16(0, 1), static_cast<uint16_t>(v.stride));
  const ptrdiff_t step = 8 * static_cast<ptrdiff_t>(v.stride);  // bytes between 8-key steps of a column
  const int16_t zv16 = static_cast<int16_t>(zv);
  const auto less_zv = [zv16](int16x8_t g) { return kPsum ? g : vsubq_n_s16(g, zv16); };  // !kPsum: v - zv
  int32_t corr[4] = {};  // [nr] kPsum: -zv sum_j p[t + r, j]
  for (int32_t r = 0; kPsum && r < nr; ++r) {
    const int16_t* pr = p.row(t + r);  // [S]
    int32_t sum = 0;
    for (int32_t j = 0; j < full; j += 8) sum = vaddvaq_s16(sum, vldrhq_s16(pr + j));
    if (full < S) sum = vaddvaq_s16(sum, vldrhq_z_s16(pr + full, tail));
    corr[r] = -zv * sum;
  }
  alignas(16) int32_t acc[4][kGroup];  // [row][column] int32 sums of this column group
  for (int32_t c0 = 0; c0 < v.cols; c0 += kGroup) {
    const int32_t nc = v.cols - c0 < kGroup ? v.cols - c0 : kGroup;
    for (int32_t ra = 0; ra < nr; ra += 2) {
      const int32_t rb = ra + 1 < nr ? ra + 1 : ra;
      ATTN_NO_UNROLL
      for (int32_t c = 0; c < nc; c += 2) {
        const int32_t c1 = c + 1 < nc ? c + 1 : c;
        const uint16x8_t off1 = vaddq_n_u16(offsets, static_cast<uint16_t>(c1 - c));
        const int16_t* pa = p.row(t + ra);   // [S]
        const int16_t* pb = p.row(t + rb);   // [S]
        const int8_t* vb = v.data + c0 + c;  // v[0, c0 + c]
        int32_t a0 = 0, a1 = 0, b0 = 0, b1 = 0;
        for (int32_t j = 0; j < full; j += 8, vb += step) {
          const int16x8_t va = vldrhq_s16(pa), vpb = vldrhq_s16(pb);
          const int16x8_t v0 = less_zv(vldrbq_gather_offset_s16(vb, offsets));
          const int16x8_t v1 = less_zv(vldrbq_gather_offset_s16(vb, off1));
          a0 = vmladavaq_s16(a0, va, v0);
          b0 = vmladavaq_s16(b0, vpb, v0);
          a1 = vmladavaq_s16(a1, va, v1);
          b1 = vmladavaq_s16(b1, vpb, v1);
          pa += 8, pb += 8;
        }
        if (full < S) {  // the last 1..7 keys
          const int16x8_t va = vldrhq_z_s16(pa, tail), vpb = vldrhq_z_s16(pb, tail);
          const int16x8_t v0 = less_zv(vldrbq_gather_offset_z_s16(vb, offsets, tail));
          const int16x8_t v1 = less_zv(vldrbq_gather_offset_z_s16(vb, off1, tail));
          a0 = vmladavaq_s16(a0, va, v0);
          b0 = vmladavaq_s16(b0, vpb, v0);
          a1 = vmladavaq_s16(a1, va, v1);
          b1 = vmladavaq_s16(b1, vpb, v1);
        }
        if (kPsum) a0 += corr[ra], a1 += corr[ra], b0 += corr[rb], b1 += corr[rb];
        acc[ra][c] = a0;
        acc[ra][c1] = a1;
        acc[rb][c] = b0;
        acc[rb][c1] = b1;
      }
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
  for (int32_t t = 0; t < p.rows; t += 4) {
    const int32_t nr = p.rows - t < 4 ? p.rows - t : 4;
    if (v.cols >= 8) {
      rows_gather<true>(p, v, zv, m, sh, zo, o, t, nr);
    } else {
      rows_gather<false>(p, v, zv, m, sh, zo, o, t, nr);
    }
  }
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_MVE
