// The fused attention softmax, int32 scores -> Q0.15 probabilities, Cortex-M55
// Helium (MVE): the arithmetic of softmax_fused_s32_ref.cpp, four scores per
// vector. The exps are read by a gather (VLDRH.U32 shifted offsets,
// predicated off past diff_limit) from kExp2Table expanded over the 16
// octaves, the shift and its rounding applied (kExpOctaves, 8 KiB: the index
// is the phase's top 12 bits, one VSHR), the normalization (e * R + 2^31) >> 32 by
// VRMULH.U32, and the int16 probabilities are written by a truncating
// VSTRH.32; tails and masked keys by predication. Every step is the ref's
// integer step: bit-exact.
#include "kernels/arch.h"

#if ATTN_HAVE_MVE
#include <arm_acle.h>
#include <arm_mve.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/exp2_table.h"
#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"
#include "kernels/mve/mve_requantize.h"

namespace attn {
namespace detail {
namespace {

// kExp2Table with each octave's shift applied: kExpOctaves.v[(o << 8) | i]
// is the ref's ((2 x >> o) + 1) >> 1 for x = kExp2Table[i], o in [0, 15], so
// that e for the phase t (u <= limit) is kExpOctaves.v[t >> 20]: one shift
// and one gather per 4 keys instead of the index's two shifts, the gather,
// the octave's shift and negation and a VRSHL (12 -> 8 instructions per 4
// keys). Made by the compiler from kExp2Table: 4096 x 2 bytes of flash.
struct ExpOctaves {
  uint16_t v[16 << kExp2TableBits];  // [octave][index]
};
constexpr ExpOctaves make_exp_octaves() {
  ExpOctaves t{};
  for (uint32_t o = 0; o < 16; ++o) {
    for (uint32_t i = 0; i < (1u << kExp2TableBits); ++i) {
      t.v[(o << kExp2TableBits) | i] = static_cast<uint16_t>(((2u * kExp2Table[i] >> o) + 1) >> 1);
    }
  }
  return t;
}
constexpr ExpOctaves kExpOctaves = make_exp_octaves();

inline void store_zero(int32_t* row, int32_t j) {
  const int16_t v = 0;
  std::memcpy(reinterpret_cast<unsigned char*>(row) + 2 * static_cast<ptrdiff_t>(j), &v, sizeof v);
}

// The exps of row[begin, end) (begin < end) below the row's max smax, in
// place; returns their sum.
__attribute__((always_inline)) inline uint32_t exps_from_max(int32_t* row, int32_t begin, int32_t end,
                                                             int32_t smax, const FusedExp& fx) {
  // Pass 1: e_j in place of s_j, and their sum. Few vector constants (the
  // limit and the top are scalar operands), so that the loop does not spill.
  static_assert(kExpPhaseIndexShift == 20 && kExp2TableBits == 8 && kExpPhaseOctaveShift == 28,
                "kExpOctaves index = t >> 20: octave in bits 8..11, index in bits 0..7");
  const uint32_t step = fx.step;
  const int32_t limit = fx.limit;
  // t = (smax - s) * step = s * -step + smax * step (mod 2^32): one VMLAS.
  uint32x4_t vneg_step = vdupq_n_u32(0u - step);
  // Opaque to the compiler: as a known splat, clang-14 makes it a scalar
  // operand of VMLA (plus a VMOV of the accumulator per step) instead.
  __asm__("" : "+w"(vneg_step));
  const uint32_t top = static_cast<uint32_t>(smax) * step;
  // u = smax - s <= diff_limit exactly where s >= smax - diff_limit (every s when that is below INT32_MIN).
  // (QSUB: the saturating difference in one instruction; MVE implies the DSP extension.)
  const int32_t floor = __qsub(smax, limit);
  // e = 0 where u > diff_limit, else the ref's ((2 x >> o) + 1) >> 1 with
  // x = table[(t >> 20) & 255] and o = t >> 28 in [0, 15]: kExpOctaves.v[t >> 20].
  // Lanes past the limit (`live` false) skip the gather (predicated: e = 0),
  // and so do the lanes past the row's end.
  uint32_t sum = 0;
  int32_t* pos = row + begin;  // one pointer walks the row (no index kept)
  {
    // A tail-predicated loop (DLSTP/LETP: the lanes past end take no part,
    // so no separate tail step), with the limit compare and the 3 steps
    // that only the live lanes need (t, the index, the gather) as one VPT
    // block: 8 instructions per 4 scores. The compilers form neither the
    // block nor, with an asm step inside a C loop, the low-overhead loop.
    // Lanes past the limit keep s in place of t: their gather is off (e = 0).
    // The sum in vector lanes (VADD: tail-predicated lanes keep their old
    // value), reduced after the loop: VADDVA would want an even-numbered
    // scalar register, which an asm operand cannot ask for.
    uint32x4_t t, e, vsum = vdupq_n_u32(0);
    __asm__ volatile(
        "dlstp.32 lr, %[n]\n"
        "1:\n"
        "vldrw.u32 %q[t], [%[pos]]\n"
        "vpttt.s32 ge, %q[t], %[floor]\n"
        "vmlast.u32 %q[t], %q[neg], %[top]\n"
        "vshrt.u32 %q[t], %q[t], #20\n"
        "vldrht.u32 %q[e], [%[table], %q[t], uxtw #1]\n"
        "vstrw.32 %q[e], [%[pos]], #16\n"
        "vadd.i32 %q[vsum], %q[vsum], %q[e]\n"
        "letp lr, 1b\n"
        : [pos] "+&r"(pos), [vsum] "+&w"(vsum), [t] "=&w"(t), [e] "=&w"(e)
        : [n] "r"(end - begin), [floor] "r"(floor), [neg] "w"(vneg_step), [top] "r"(top),
          [table] "r"(kExpOctaves.v)
        : "lr", "memory");
    sum = vaddvq_u32(vsum);
  }

  return sum;
}

// The max and the exps of row[begin, end) (begin < end), in place; returns
// their sum. Inlined into the rows loop, so that a row costs no call.
__attribute__((always_inline)) inline uint32_t row_exps(int32_t* row, int32_t begin, int32_t end,
                                                        const FusedExp& fx) {
  // The row max: lane-wise VMAX, one across-vector VMAXV at the end. The
  // max and the normalization loops are asm tail-predicated low-overhead
  // loops (DLSTP/LETP: no per-step predicate work, no separate tail step):
  // clang-14 makes them of the predicated C loops, GCC 12 does not (it
  // moves each predicate through a general register: VMRS, SXTH, VMSR).
  // Lanes past end take no part (VMAX leaves them as they were).
  int32x4_t vmaxes = vdupq_n_s32(row[begin]);
  {
    const int32_t* q = row + begin;
    int32x4_t x;
    __asm__ volatile(
        "dlstp.32 lr, %[n]\n"
        "1:\n"
        "vldrw.u32 %q[x], [%[q]], #16\n"
        "vmax.s32 %q[m], %q[m], %q[x]\n"
        "letp lr, 1b\n"
        : [q] "+&r"(q), [m] "+&w"(vmaxes), [x] "=&w"(x)
        : [n] "r"(end - begin)
        : "lr", "memory");
  }
  return exps_from_max(row, begin, end, vmaxvq_s32(row[begin], vmaxes), fx);
}

// The reciprocals of four rows' sums (lanes), exactly as the ref's
// fused_softmax_reciprocal per lane: h = clz(sum), a = (sum << h) - 2^31,
// r = one_over_one_plus_x(a) shifted by h + 15 - 30 (VSHL by a negative count
// is the logical >>), recip = r - (r >> 15). A lane whose sum is 0 (no row)
// gives a value nobody reads.
inline uint32x4_t reciprocals(uint32x4_t sums) {
  static_assert(kProbBits == 15, "the shift h + kProbBits - 30");
  const uint32x4_t h = vclzq_u32(sums);
  const int32x4_t a = vreinterpretq_s32_u32(
      vsubq_u32(vshlq_u32(sums, vreinterpretq_s32_u32(h)), vdupq_n_u32(uint32_t{1} << 31)));
  const uint32x4_t r31 = vreinterpretq_u32_s32(mve::one_over_one_plus_x(a));
  const uint32x4_t r = vshlq_u32(r31, vsubq_s32(vreinterpretq_s32_u32(h), vdupq_n_s32(30 - kProbBits)));
  return vsubq_u32(r, vshrq_n_u32(r, kProbBits));
}

// Q0.15 probabilities of row[begin, end) from its exps and reciprocal, as
// int16 over the first 2n bytes of row, 0 outside the range.
__attribute__((always_inline)) inline void row_probs(int32_t* row, int32_t begin, int32_t end, int32_t n,
                                                     uint32_t r) {
  const uint32x4_t recip = vdupq_n_u32(r);
  // Pass 2: p_j = (e_j * recip + 2^31) >> 32 as int16 over the start of the
  // row. The store of entries [j, j + 4) covers int32 entries j / 2 .. j / 2 + 1,
  // read by this or an earlier iteration (or masked).
  const uint32_t* urow = reinterpret_cast<const uint32_t*>(row);
  uint16_t* prob = reinterpret_cast<uint16_t*>(row);
  {
    const uint32_t* src = urow + begin;
    uint16_t* dst = prob + begin;
    uint32x4_t x;
    __asm__ volatile(
        "dlstp.32 lr, %[n]\n"
        "1:\n"
        "vldrw.u32 %q[x], [%[src]], #16\n"
        "vrmulh.u32 %q[x], %q[x], %q[r]\n"
        "vstrh.32 %q[x], [%[dst]], #8\n"  // (a narrowing store: low base register)
        "letp lr, 1b\n"
        : [src] "+&r"(src), [dst] "+&l"(dst), [x] "=&w"(x)
        : [n] "r"(end - begin), [r] "w"(recip)
        : "lr", "memory");
  }
  for (int32_t j = 0; j < begin; ++j) store_zero(row, j);
  for (int32_t j = end; j < n; ++j) store_zero(row, j);
}

// Four rows over the same keys [begin, end) (begin < end; rows of a tile
// without a mask, or with one that gives them the same keys): each pass's
// loop walks all four rows (the max and the normalization) or two (the
// exps: their constants fill the core registers), so that a vector of 4
// scores costs 2.25 instructions in the max pass (3 alone), 7.5 in the exps
// (8) and 3.25 in the normalization (4), and the rows share one loop's setup.
// The same steps per lane as row_exps and row_probs: the same results.
ATTN_NOINLINE void rows4_same(int32_t* const (&row)[4], int32_t begin, int32_t end, int32_t n,
                              const FusedExp& fx) {
  const int32_t keys = end - begin;
  int32x4_t m0 = vdupq_n_s32(row[0][begin]), m1 = vdupq_n_s32(row[1][begin]);
  int32x4_t m2 = vdupq_n_s32(row[2][begin]), m3 = vdupq_n_s32(row[3][begin]);
  {
    const int32_t *q0 = row[0] + begin, *q1 = row[1] + begin, *q2 = row[2] + begin, *q3 = row[3] + begin;
    int32x4_t x;
    __asm__ volatile(
        "dlstp.32 lr, %[n]\n"
        "1:\n"
        "vldrw.u32 %q[x], [%[q0]], #16\n"
        "vmax.s32 %q[m0], %q[m0], %q[x]\n"
        "vldrw.u32 %q[x], [%[q1]], #16\n"
        "vmax.s32 %q[m1], %q[m1], %q[x]\n"
        "vldrw.u32 %q[x], [%[q2]], #16\n"
        "vmax.s32 %q[m2], %q[m2], %q[x]\n"
        "vldrw.u32 %q[x], [%[q3]], #16\n"
        "vmax.s32 %q[m3], %q[m3], %q[x]\n"
        "letp lr, 1b\n"
        : [q0] "+&r"(q0), [q1] "+&r"(q1), [q2] "+&r"(q2), [q3] "+&r"(q3), [m0] "+&w"(m0), [m1] "+&w"(m1),
          [m2] "+&w"(m2), [m3] "+&w"(m3), [x] "=&w"(x)
        : [n] "r"(keys)
        : "lr", "memory");
  }
  const int32_t smax[4] = {vmaxvq_s32(row[0][begin], m0), vmaxvq_s32(row[1][begin], m1),
                           vmaxvq_s32(row[2][begin], m2), vmaxvq_s32(row[3][begin], m3)};
  // The exps, two rows per loop (as exps_from_max per row).
  uint32x4_t vneg_step = vdupq_n_u32(0u - fx.step);
  __asm__("" : "+w"(vneg_step));  // opaque: see exps_from_max
  uint32_t sums[4];
  for (int32_t r = 0; r < 4; r += 2) {
    const uint32_t top_a = static_cast<uint32_t>(smax[r]) * fx.step;
    const uint32_t top_b = static_cast<uint32_t>(smax[r + 1]) * fx.step;
    const int32_t floor_a = __qsub(smax[r], fx.limit);
    const int32_t floor_b = __qsub(smax[r + 1], fx.limit);
    int32_t* pa = row[r] + begin;
    int32_t* pb = row[r + 1] + begin;
    uint32x4_t t, e, sum_a = vdupq_n_u32(0), sum_b = vdupq_n_u32(0);
    __asm__ volatile(
        "dlstp.32 lr, %[n]\n"
        "1:\n"
        "vldrw.u32 %q[t], [%[pa]]\n"
        "vpttt.s32 ge, %q[t], %[floor_a]\n"
        "vmlast.u32 %q[t], %q[neg], %[top_a]\n"
        "vshrt.u32 %q[t], %q[t], #20\n"
        "vldrht.u32 %q[e], [%[table], %q[t], uxtw #1]\n"
        "vstrw.32 %q[e], [%[pa]], #16\n"
        "vadd.i32 %q[sum_a], %q[sum_a], %q[e]\n"
        "vldrw.u32 %q[t], [%[pb]]\n"
        "vpttt.s32 ge, %q[t], %[floor_b]\n"
        "vmlast.u32 %q[t], %q[neg], %[top_b]\n"
        "vshrt.u32 %q[t], %q[t], #20\n"
        "vldrht.u32 %q[e], [%[table], %q[t], uxtw #1]\n"
        "vstrw.32 %q[e], [%[pb]], #16\n"
        "vadd.i32 %q[sum_b], %q[sum_b], %q[e]\n"
        "letp lr, 1b\n"
        :
        [pa] "+&r"(pa), [pb] "+&r"(pb), [sum_a] "+&w"(sum_a), [sum_b] "+&w"(sum_b), [t] "=&w"(t), [e] "=&w"(e)
        : [n] "r"(keys), [floor_a] "r"(floor_a), [floor_b] "r"(floor_b), [neg] "w"(vneg_step),
          [top_a] "r"(top_a), [top_b] "r"(top_b), [table] "r"(kExpOctaves.v)
        : "lr", "memory");
    sums[r] = vaddvq_u32(sum_a);
    sums[r + 1] = vaddvq_u32(sum_b);
  }
  const uint32x4_t recips = reciprocals(vld1q_u32(sums));
  const uint32x4_t r0 = vdupq_n_u32(vgetq_lane_u32(recips, 0)), r1 = vdupq_n_u32(vgetq_lane_u32(recips, 1));
  const uint32x4_t r2 = vdupq_n_u32(vgetq_lane_u32(recips, 2)), r3 = vdupq_n_u32(vgetq_lane_u32(recips, 3));
  {
    // As row_probs: the int16 probabilities over the start of each row.
    const uint32_t *s0 = reinterpret_cast<const uint32_t*>(row[0]) + begin,
                   *s1 = reinterpret_cast<const uint32_t*>(row[1]) + begin,
                   *s2 = reinterpret_cast<const uint32_t*>(row[2]) + begin,
                   *s3 = reinterpret_cast<const uint32_t*>(row[3]) + begin;
    uint16_t *d0 = reinterpret_cast<uint16_t*>(row[0]) + begin,
             *d1 = reinterpret_cast<uint16_t*>(row[1]) + begin,
             *d2 = reinterpret_cast<uint16_t*>(row[2]) + begin,
             *d3 = reinterpret_cast<uint16_t*>(row[3]) + begin;
    uint32x4_t x;
    __asm__ volatile(
        "dlstp.32 lr, %[n]\n"
        "1:\n"
        "vldrw.u32 %q[x], [%[s0]], #16\n"
        "vrmulh.u32 %q[x], %q[x], %q[r0]\n"
        "vstrh.32 %q[x], [%[d0]], #8\n"  // (narrowing stores: low base registers)
        "vldrw.u32 %q[x], [%[s1]], #16\n"
        "vrmulh.u32 %q[x], %q[x], %q[r1]\n"
        "vstrh.32 %q[x], [%[d1]], #8\n"
        "vldrw.u32 %q[x], [%[s2]], #16\n"
        "vrmulh.u32 %q[x], %q[x], %q[r2]\n"
        "vstrh.32 %q[x], [%[d2]], #8\n"
        "vldrw.u32 %q[x], [%[s3]], #16\n"
        "vrmulh.u32 %q[x], %q[x], %q[r3]\n"
        "vstrh.32 %q[x], [%[d3]], #8\n"
        "letp lr, 1b\n"
        : [s0] "+&r"(s0), [s1] "+&r"(s1), [s2] "+&r"(s2), [s3] "+&r"(s3), [d0] "+&l"(d0), [d1] "+&l"(d1),
          [d2] "+&l"(d2), [d3] "+&l"(d3), [x] "=&w"(x)
        : [n] "r"(keys), [r0] "w"(r0), [r1] "w"(r1), [r2] "w"(r2), [r3] "w"(r3)
        : "lr", "memory");
  }
  if (begin > 0 || end < n) {  // masked keys: probability 0
    for (int32_t r = 0; r < 4; ++r) {
      for (int32_t j = 0; j < begin; ++j) store_zero(row[r], j);
      for (int32_t j = end; j < n; ++j) store_zero(row[r], j);
    }
  }
}

// Rows [0, rows) of s, each over its own keys, four at a time: their exps,
// then their four reciprocals as one vector (the scalar steps of one cost
// about as much as the vector's four), then their probabilities. Out of
// line: its registers do not weigh on the calls of rows4_same.
ATTN_NOINLINE void rows_any(int32_t* s, int32_t stride, int32_t rows, const int32_t* begin,
                            const int32_t* end, int32_t n, const FusedExp& fx) {
  for (int32_t r0 = 0; r0 < rows; r0 += 4) {
    const int32_t nr = rows - r0 < 4 ? rows - r0 : 4;
    uint32_t sums[4] = {};  // [nr]
    for (int32_t r = 0; r < nr; ++r) {
      int32_t* row = s + static_cast<ptrdiff_t>(r0 + r) * stride;
      if (begin[r0 + r] < end[r0 + r]) sums[r] = row_exps(row, begin[r0 + r], end[r0 + r], fx);
    }
    uint32_t recips[4];
    vst1q_u32(recips, reciprocals(vld1q_u32(sums)));
    for (int32_t r = 0; r < nr; ++r) {
      int32_t* row = s + static_cast<ptrdiff_t>(r0 + r) * stride;
      if (begin[r0 + r] >= end[r0 + r]) {  // fully masked: all-zero weights
        for (int32_t j = 0; j < n; ++j) store_zero(row, j);
      } else {
        row_probs(row, begin[r0 + r], end[r0 + r], n, recips[r]);
      }
    }
  }
}

}  // namespace

void softmax_fused_rows_mve(int32_t* s, int32_t stride, int32_t rows, const int32_t* begin,
                            const int32_t* end, int32_t n, const FusedSoftmax& sm) {
  const FusedExp fx = fused_exp_constants(sm);  // once per call; a local: the rows' stores cannot alias it
  // Leading groups of four rows over the same keys (a tile without a mask)
  // in rows4_same, the rest in rows_any.
  int32_t r0 = 0;
  for (; r0 + 4 <= rows; r0 += 4) {
    const int32_t* b = begin + r0;
    const int32_t* e = end + r0;
    if (!(b[0] < e[0] && b[1] == b[0] && b[2] == b[0] && b[3] == b[0] && e[1] == e[0] && e[2] == e[0] &&
          e[3] == e[0]))
      break;
    int32_t* const row[4] = {
        s + static_cast<ptrdiff_t>(r0) * stride, s + static_cast<ptrdiff_t>(r0 + 1) * stride,
        s + static_cast<ptrdiff_t>(r0 + 2) * stride, s + static_cast<ptrdiff_t>(r0 + 3) * stride};
    rows4_same(row, b[0], e[0], n, fx);
  }
  if (r0 < rows)
    rows_any(s + static_cast<ptrdiff_t>(r0) * stride, stride, rows - r0, begin + r0, end + r0, n, fx);
}

void softmax_fused_row_mve(int32_t* row, int32_t begin, int32_t end, int32_t n, const FusedSoftmax& sm) {
  softmax_fused_rows_mve(row, 0, 1, &begin, &end, n, sm);
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_MVE
