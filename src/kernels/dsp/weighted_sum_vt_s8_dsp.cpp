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
// (dsp::dot4_expanded: 15 instructions per 16 MACs). The zero point is one
// correction per row. Same int32 sums and requantization as
// weighted_sum_vt_s8_ref / weighted_sum_s8_ref: bit-exact.
#include "kernels/arch.h"

#if ATTN_HAVE_DSP
#include <cstring>

#include "kernels/dsp/dsp_s8.h"
#include "kernels/kernels_fixed.h"
#include "kernels/requantize.h"

namespace attn {
namespace detail {
namespace {

constexpr int32_t kCols = 16;  // value columns per block of accumulators

// Row r of the expansion: br[(k / 4) * 8 + {0, 1}] = (p[k], p[k + 2]), (p[k + 1], p[k + 3])
// with p[k] = fused_prob(er[k], rc), k < K4 (a multiple of 4, > 0, <= dsp::kExpandMaxK);
// returns sum + sum_k p[k]. One row per call: one copy of the asm (flash).
__attribute__((noinline)) int32_t expand_p1(const int32_t* er, uint32_t rc, int32_t K4, int32_t* br,
                                            int32_t sum) {
  constexpr int32_t kOnes = 0x00010001;  // SMLAD against it adds both halves
  const int32_t* const end = er + K4;
  int32_t s = sum;
  uint32_t e0, e1, p0, p1, p2, p3;
  // Per four keys (one step): two LDRD of exps, four UMULL and four ADD
  // (fused_prob: (e rc + 2^31) >> 32 is the high word plus bit 31 of the low
  // one, the low word over e: v7-M allows RdLo == Rm), two ORR to pair them,
  // one STRD, two SMLAD for the sum: 15 instructions, two steps to a loop
  // iteration (an odd number of steps enters at the second).
#define ATTN_EXPAND_P_STEP                  \
  "ldrd   %[e0], %[e1], [%[er]], #8\n\t"    \
  "umull  %[e0], %[p0], %[e0], %[rc]\n\t"   \
  "umull  %[e1], %[p1], %[e1], %[rc]\n\t"   \
  "add    %[p0], %[p0], %[e0], lsr #31\n\t" \
  "add    %[p1], %[p1], %[e1], lsr #31\n\t" \
  "ldrd   %[e0], %[e1], [%[er]], #8\n\t"    \
  "umull  %[e0], %[p2], %[e0], %[rc]\n\t"   \
  "umull  %[e1], %[p3], %[e1], %[rc]\n\t"   \
  "add    %[p2], %[p2], %[e0], lsr #31\n\t" \
  "add    %[p3], %[p3], %[e1], lsr #31\n\t" \
  "orr    %[p0], %[p0], %[p2], lsl #16\n\t" \
  "orr    %[p1], %[p1], %[p3], lsl #16\n\t" \
  "strd   %[p0], %[p1], [%[br]], #32\n\t"   \
  "smlad  %[s], %[p0], %[ones], %[s]\n\t"   \
  "smlad  %[s], %[p1], %[ones], %[s]\n\t"
  __asm__ volatile(
      "tst    %[k4], #4\n\t"
      "bne    2f\n\t"
      "1:\n\t" ATTN_EXPAND_P_STEP "2:\n\t" ATTN_EXPAND_P_STEP
      "cmp    %[er], %[end]\n\t"
      "bne    1b\n\t"
      : [er] "+r"(er), [br] "+r"(br), [s] "+r"(s), [e0] "=&r"(e0), [e1] "=&r"(e1), [p0] "=&r"(p0),
        [p1] "=&r"(p1), [p2] "=&r"(p2), [p3] "=&r"(p3)
      : [end] "r"(end), [rc] "r"(rc), [ones] "r"(kOnes), [k4] "r"(K4)
      : "cc", "memory");
#undef ATTN_EXPAND_P_STEP
  return s;
}

// o[c] = requant(acc[c][r] + corr), c < nc. Out of line: one copy of the
// requantization; compiled for size, as rows4 (flash).
ATTN_COLD_CODE __attribute__((noinline)) void store_row(const int32_t (*acc)[4], int32_t nc, int32_t r,
                                                        int32_t corr, const fast::Requant& rq, int32_t zo,
                                                        int8_t* o) {
  // The shift tested once, the constants in a local copy: the int8 stores
  // could alias rq as far as GCC knows, and it would reload its fields and
  // re-test its shift per output (~21 instructions per output, ~12 here).
  const fast::Requant q = rq;
  if (q.shift > -2) {
#pragma GCC unroll 1
    for (int32_t c = 0; c < nc; ++c) o[c] = static_cast<int8_t>(dsp::ssat8(zo + q(acc[c][r] + corr)));
    return;
  }
#pragma GCC unroll 1
  for (int32_t c = 0; c < nc; ++c) o[c] = static_cast<int8_t>(dsp::ssat8(zo + q.folded(acc[c][r] + corr)));
}

// Rows [t, t + R) of o, R 4 or 1 (row t four times, stored once), when
// every key fits one expansion (4 <= S <= dsp::kExpandMaxK) and the
// requantization folds (shift in [-23, -2]): P expanded once, then the
// linear kernel's channel loop over the value rows (dsp::channels_asm),
// requantization and stores included; the accumulators of value row c
// start at each row's zero-point correction plus the last S % 4 keys' terms.
// GCC: -O2 (its -O3 unrolls the set-up loops: +420 B of flash, and more
// instructions at 64/64/4 and 128/64/4).
#if defined(__GNUC__) && !defined(__clang__)
#define ATTN_SETUP_CODE __attribute__((optimize("O2")))
#else
#define ATTN_SETUP_CODE
#endif
ATTN_SETUP_CODE void rows4_asm(ConstMatS32 e, const uint32_t* recip, ConstMatS8 vt, int32_t zv,
                               const fast::Requant& rq, int32_t zo, MatS8 o, int32_t t, int32_t R) {
  const int32_t S = e.cols;
  const int32_t S4 = S & ~3;
  int32_t buf[2 * dsp::kExpandMaxK];  // [S4 / 4][4 rows][2] int16 pairs
  int32_t corr[4];                    // -zv * sum_j p[r, j]
  int32_t ptail[4][3];                // the last S % 4 probabilities of each row
  for (int32_t r = 0; r < 4; ++r) {
    const int32_t tr = t + (r < R ? r : 0);
    corr[r] = expand_p1(e.row(tr), recip[tr], S4, buf + 2 * r, 0);
    for (int32_t j = S4; j < S; ++j) {
      ptail[r][j - S4] = fused_prob(static_cast<uint32_t>(e.row(tr)[j]), recip[tr]);
      corr[r] += ptail[r][j - S4];
    }
    corr[r] *= -zv;
  }
  const dsp::Channel base{rq.hi_shift,
                          {corr[0], corr[1], corr[2], corr[3]},
                          rq.multiplier,
                          rq.hi_base + zo * (int32_t{1} << rq.hi_shift)};
  dsp::Channel ch[dsp::kChannels];  // [nc]
  for (int32_t c0 = 0; c0 < vt.rows; c0 += dsp::kChannels) {
    const int32_t nc = vt.rows - c0 < dsp::kChannels ? vt.rows - c0 : dsp::kChannels;
#pragma GCC unroll 1
    for (int32_t c = 0; c < nc; ++c) ch[c] = base;
#pragma GCC unroll 1  // S % 4 keys, often none
    for (int32_t j = S4; j < S; ++j) {
      const int32_t p0 = ptail[0][j - S4], p1 = ptail[1][j - S4], p2 = ptail[2][j - S4],
                    p3 = ptail[3][j - S4];
#pragma GCC unroll 1
      for (int32_t c = 0; c < nc; ++c) {
        const int32_t v = vt.row(c0 + c)[j];
        ch[c].init[0] += p0 * v;
        ch[c].init[1] += p1 * v;
        ch[c].init[2] += p2 * v;
        ch[c].init[3] += p3 * v;
      }
    }
    dsp::channels_asm(buf, ch, nc, vt.row(c0), vt.stride, S4, o.row(t) + c0, R == 4 ? o.stride : 0, 1);
  }
}

#undef ATTN_SETUP_CODE

// Rows [t, t + R) of o, R in [1, 4] (rows past R repeat the last one and are
// not stored), in blocks of keys and columns: the cases rows4_asm does not
// take (S > dsp::kExpandMaxK or < 4, two or three rows, shifts it does not
// fold). Compiled for size (flash).
ATTN_COLD_CODE void rows4(ConstMatS32 e, const uint32_t* recip, ConstMatS8 vt, int32_t zv,
                          const fast::Requant& rq, int32_t zo, MatS8 o, int32_t t, int32_t R) {
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
    int32_t acc[kCols][4];  // [column][row], the sums without the zero point; nc columns used
    std::memset(acc, 0, static_cast<size_t>(nc) * sizeof acc[0]);
    for (int32_t j0 = 0; j0 < S; j0 += dsp::kExpandMaxK) {
      const int32_t nj = S - j0 < dsp::kExpandMaxK ? S - j0 : dsp::kExpandMaxK;
      const int32_t nj4 = nj & ~3;
      const int32_t* pj[4] = {pr[0] + j0, pr[1] + j0, pr[2] + j0, pr[3] + j0};  // [nj] each
      int32_t again[4] = {0, 0, 0, 0};  // the sums of later column blocks, unused
      int32_t* const sums = c0 == 0 ? corr : again;
      for (size_t r = 0; r < 4 && nj4 > 0; ++r) sums[r] = expand_p1(pj[r], rc[r], nj4, buf + 2 * r, sums[r]);
      int32_t ptail[4][3];  // the last nj % 4 probabilities of each row
#pragma GCC unroll 1        // the tails: rare and short, one copy (flash)
      for (int32_t j = nj4; j < nj; ++j) {
        for (size_t r = 0; r < 4; ++r) {
          ptail[r][j - nj4] = fused_prob(static_cast<uint32_t>(pj[r][j]), rc[r]);
          if (c0 == 0) corr[r] += ptail[r][j - nj4];
        }
      }
      for (int32_t c = 0; c < nc; ++c) {
        const int8_t* v = vt.row(c0 + c) + j0;  // [nj]
        dsp::dot4_expanded(buf, v, nj4, acc[c]);
#pragma GCC unroll 1
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

// Compiled for size (flash): the dispatch, a few instructions more per call.
ATTN_COLD_CODE void weighted_sum_vt_s8_dsp(ConstMatS32 e, const uint32_t* recip, ConstMatS8 vt, int32_t zv,
                                           const Requant& requant, MatS8 o) {
  const int32_t m = requant.multiplier, sh = requant.shift, zo = requant.zero_point;
  const fast::Requant rq(m, sh);
  const bool fast = e.cols >= 4 && e.cols <= dsp::kExpandMaxK && sh <= -2 && sh >= -23;
  for (int32_t t = 0; t < e.rows; t += 4) {
    const int32_t R = e.rows - t < 4 ? e.rows - t : 4;
    if (fast && (R == 4 || R == 1)) {
      rows4_asm(e, recip, vt, zv, rq, zo, o, t, R);
    } else {
      rows4(e, recip, vt, zv, rq, zo, o, t, R);
    }
  }
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_DSP
