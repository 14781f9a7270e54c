// weighted sum over transposed values, int8, probabilities from the fused
// softmax's exps, Cortex-M DSP extension:
// o[t, c] = requant(sum_j p[t, j] vt[c, j] - zv sum_j p[t, j]), p[t, j] =
// fused_prob(e[t, j], recip[t]): the softmax's normalization pass is done
// here, while expanding P (UMLAL per probability), instead of a pass of its own.
// With V stored [d, S], a column of V is a contiguous row of vt, and P.V is
// the linear kernel's loop with the roles swapped: four rows of P are
// expanded once (per block of up to dsp::kExpandMaxK keys) into the SMLAD
// pair order of a value word ((p0, p2), (p1, p3) against SXTB16's (v0, v2),
// (v1, v3)), then each value row is streamed once for the four rows
// (dsp::dot4_expanded: 17 instructions per 16 MACs). The zero point is one
// correction per row. Same int32 sums and requantization as
// weighted_sum_vt_s8_ref / weighted_sum_s8_ref: bit-exact.
#include "internal/arch.h"

#if ATTN_HAVE_DSP
#include "internal/dsp_s8.h"
#include "internal/kernels_fixed.h"
#include "internal/requantize.h"

namespace attn {
namespace detail {
namespace {

constexpr int32_t kCols = 16;  // value columns per block of accumulators

// buf[(k / 4) * 8 + 2 r + {0, 1}] = (p[r][k], p[r][k + 2]), (p[r][k + 1], p[r][k + 3])
// with p[r][k] = fused_prob(e[r][k], recip[r]), for r < 4, k < K4 (a multiple
// of 4, <= dsp::kExpandMaxK); sum[r] += sum_{k < K4} p[r][k].
void expand_p4(const int32_t* const* e, const uint32_t* recip, int32_t K4, int32_t* buf, int32_t* sum) {
  constexpr int32_t kOnes = 0x00010001;  // SMLAD against it adds both halves
  for (size_t r = 0; r < 4; ++r) {
    const int32_t* er = e[r];  // [K4]
    const uint32_t rc = recip[r];
    int32_t* br = buf + 2 * r;
    int32_t s = sum[r];
    for (int32_t k = 0; k < K4; k += 4, er += 4, br += 8) {
      const uint32_t p0 = static_cast<uint32_t>(fused_prob(static_cast<uint32_t>(er[0]), rc));
      const uint32_t p1 = static_cast<uint32_t>(fused_prob(static_cast<uint32_t>(er[1]), rc));
      const uint32_t p2 = static_cast<uint32_t>(fused_prob(static_cast<uint32_t>(er[2]), rc));
      const uint32_t p3 = static_cast<uint32_t>(fused_prob(static_cast<uint32_t>(er[3]), rc));
      const int32_t even = static_cast<int32_t>(p0 | (p2 << 16));  // p <= 32767
      const int32_t odd = static_cast<int32_t>(p1 | (p3 << 16));
      br[0] = even;
      br[1] = odd;
      s = __smlad(odd, kOnes, __smlad(even, kOnes, s));
    }
    sum[r] = s;
  }
}

// o[c] = requant(acc[c][r] + corr), c < nc. Out of line: one copy of the
// requantization (flash).
__attribute__((noinline)) void store_row(const int32_t (*acc)[4], int32_t nc, int32_t r, int32_t corr,
                                         const fast::Requant& rq, int32_t zo, int8_t* o) {
  for (int32_t c = 0; c < nc; ++c) o[c] = static_cast<int8_t>(dsp::ssat8(zo + rq(acc[c][r] + corr)));
}

// Rows [t, t + R) of o, R in [1, 4] (rows past R repeat the last one and are
// not stored).
void rows4(ConstMatS32 e, const uint32_t* recip, ConstMatS8 vt, int32_t zv, const fast::Requant& rq,
           int32_t zo, MatS8 o, int32_t t, int32_t R) {
  const int32_t S = e.cols;
  const int32_t d = vt.rows;
  const int32_t* pr[4];  // exps [S] each
  uint32_t rc[4];        // their normalizers
  for (int32_t r = 0; r < 4; ++r) {
    pr[r] = e.row(t + (r < R ? r : R - 1));
    rc[r] = recip[t + (r < R ? r : R - 1)];
  }
  // -zv * sum_j p[r, j], the sums taken while expanding the first block of columns.
  int32_t corr[4] = {0, 0, 0, 0};
  int32_t buf[2 * dsp::kExpandMaxK];  // [keys / 4][4 rows][2] int16 pairs
  for (int32_t c0 = 0; c0 < d; c0 += kCols) {
    const int32_t nc = d - c0 < kCols ? d - c0 : kCols;
    int32_t acc[kCols][4] = {};  // [column][row], the sums without the zero point
    for (int32_t j0 = 0; j0 < S; j0 += dsp::kExpandMaxK) {
      const int32_t nj = S - j0 < dsp::kExpandMaxK ? S - j0 : dsp::kExpandMaxK;
      const int32_t nj4 = nj & ~3;
      const int32_t* pj[4] = {pr[0] + j0, pr[1] + j0, pr[2] + j0, pr[3] + j0};  // [nj] each
      int32_t again[4] = {0, 0, 0, 0};  // the sums of later column blocks, unused
      expand_p4(pj, rc, nj4, buf, c0 == 0 ? corr : again);
      int32_t ptail[4][3];  // the last nj % 4 probabilities of each row
      for (int32_t j = nj4; j < nj; ++j) {
        for (size_t r = 0; r < 4; ++r) {
          ptail[r][j - nj4] = fused_prob(static_cast<uint32_t>(pj[r][j]), rc[r]);
          if (c0 == 0) corr[r] += ptail[r][j - nj4];
        }
      }
      for (int32_t c = 0; c < nc; ++c) {
        const int8_t* v = vt.row(c0 + c) + j0;  // [nj]
        dsp::dot4_expanded(buf, v, nj4, acc[c]);
        for (int32_t j = nj4; j < nj; ++j) {
          for (size_t r = 0; r < 4; ++r) acc[c][r] += ptail[r][j - nj4] * int32_t{v[j]};
        }
      }
    }
    if (c0 == 0) {
      for (size_t r = 0; r < 4; ++r) corr[r] *= -zv;
    }
    for (int32_t r = 0; r < R; ++r) store_row(acc, nc, r, corr[r], rq, zo, o.row(t + r) + c0);
  }
}

}  // namespace

void weighted_sum_vt_s8_dsp(ConstMatS32 e, const uint32_t* recip, ConstMatS8 vt, int32_t zv, int32_t m,
                            int32_t sh, int32_t zo, MatS8 o) {
  const fast::Requant rq(m, sh);
  for (int32_t t = 0; t < e.rows; t += 4)
    rows4(e, recip, vt, zv, rq, zo, o, t, e.rows - t < 4 ? e.rows - t : 4);
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_DSP
