// The fused attention softmax, Cortex-M DSP-extension cores (M4, M7, M33):
// the arithmetic of softmax_fused_row_ref (see there), bit-exact, with its
// two per-score passes hand-scheduled. GCC 12 reloads the table address and
// keeps one score per iteration (18 + 7 instructions per score); here:
//   exps: two scores per iteration (LDRD / STRD), 11.5 instructions per score;
//   probabilities: two per iteration, UMULL plus bit 31 of the low word
//   (the rounding), the pair packed by PKHBT into one store: 4.5 per score.
// The max: four scores per iteration in asm. The masked / odd tails stay in C.
#include "kernels/arch.h"

#if ATTN_HAVE_DSP
#include <cstring>

#include "kernels/exp2_table.h"
#include "kernels/kernels_fixed.h"

namespace attn {
namespace detail {
namespace {

static_assert(kExpPhaseIndexShift == 20 && kExp2TableBits == 8 && kExpPhaseOctaveShift == 28,
              "the asm reads t[20..28) and t >> 28");

inline void store_prob(int32_t* row, int32_t j, int32_t p) {
  const int16_t v = static_cast<int16_t>(p);
  std::memcpy(reinterpret_cast<unsigned char*>(row) + 2 * static_cast<ptrdiff_t>(j), &v, sizeof v);
}

// e of the score in register s, in place, added to %[sum]: 10 instructions
// whatever the score. The phase t = (smax - s) * step is one MLS against
// top = smax * step (mod 2^32, as the ref's product); the limit test
// lim - u = s - (smax - lim) is one SUB against floor = smax - lim (mod
// 2^32: the same bits, u and lim < 2^31). A score past the limit (u > lim)
// runs the same steps on a garbage t (the shift by register takes any
// amount) and is then cleared by BIC with the sign of lim - u: no branch,
// so a row costs the same on any data. The ref's rounding shift
// ((2 x >> k) + 1) >> 1 = floor(x / 2^k + 1/2) (k = t >> 28 <= 15) is
// SMMULR's rounding of (x 2^15 >> k) 2^17 / 2^32: exact, one instruction
// fewer than the shifts.
#define ATTN_EXP_SCORE(s)                   \
  "sub    %[m], %[" s                       \
  "], %[floor]\n\t"                         \
  "mls    %[" s "], %[" s                   \
  "], %[step], %[top]\n\t"                  \
  "ubfx   %[x], %[" s                       \
  "], #20, #8\n\t"                          \
  "ldrh   %[x], [%[tab], %[x], lsl #1]\n\t" \
  "lsr    %[" s "], %[" s                   \
  "], #28\n\t"                              \
  "lsl    %[x], %[x], #15\n\t"              \
  "lsr    %[" s "], %[x], %[" s             \
  "]\n\t"                                   \
  "smmulr %[" s "], %[" s                   \
  "], %[c17]\n\t"                           \
  "bic    %[" s "], %[" s                   \
  "], %[m], asr #31\n\t"                    \
  "add    %[sum], %[sum], %[" s "]\n\t"

// fused_softmax_reciprocal(sum) for sum >= 65447 (a row's sum of exps),
// bit-exact: every SRDHM of its Newton steps, floor((a b + 2^30) / 2^31),
// is SMMULR's floor((a 2b + 2^31) / 2^32) with one factor doubled. The
// iterate is kept doubled (y = 2 x, Q1.30, the final << 1 included), so that
// a step is two SMMULR, one RSB and one ADD: ~25 instructions a row instead
// of ~65 for the portable form's 64-bit products. All 2^31 inputs of
// one_over_one_plus_x checked equal to the ref's (a host program emulating
// SMMULR).
inline int32_t smmulr(int32_t a, int32_t b) {
  int32_t r;
  __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
uint32_t reciprocal(uint32_t sum) {
  const int h = __builtin_clz(sum);  // sum = 2^(31 - h) (1 + a), h in [0, 16]
  const int32_t half_denominator = static_cast<int32_t>((sum << h) >> 1);  // (1 + a) / 2, Q0.31
  constexpr uint32_t k48Over17x2 = 2u * 1515870810u;                       // 2 x 48/17 in Q2.29
  constexpr int32_t kNeg32Over17x2 = 2 * -1010580540;                      // 2 x -32/17 in Q2.29
  uint32_t y = k48Over17x2 + (static_cast<uint32_t>(smmulr(half_denominator, kNeg32Over17x2)) << 1);
#pragma GCC unroll 3
  for (int i = 0; i < 3; ++i) {
    const uint32_t one_minus =
        (uint32_t{1} << 29) - static_cast<uint32_t>(smmulr(half_denominator, static_cast<int32_t>(y)));
    y += static_cast<uint32_t>(smmulr(static_cast<int32_t>(y), static_cast<int32_t>(one_minus))) << 3;
  }
  const uint32_t r31 = y >= (uint32_t{1} << 31) ? uint32_t{0x7FFFFFFF} : y;  // the ref's saturating << 1
  const int rs = h + kProbBits - 30;                                         // <= 1: R < 2^32
  const uint32_t r = rs >= 0 ? r31 << rs : r31 >> -rs;
  return r - (r >> kProbBits);
}

// The exps over row[begin, end) (begin < end), in place; returns the
// normalizer. Entries outside the range are left as they are.
uint32_t exps_pass(int32_t* row, int32_t begin, int32_t end, const FusedSoftmax& sm) {
  // The max: four scores per iteration in asm (16 instructions; GCC: 18),
  // the last (end - begin - 1) % 4 in C.
  int32_t m0 = row[begin], m1 = m0;
  const int32_t* q = row + begin + 1;
  const int32_t* const q4 = q + ((end - begin - 1) & ~int32_t{3});
#if defined(__OPTIMIZE__)
  if (q != q4) {
    int32_t a, b;
    // One pair: m0 = max(m0, q[0]), m1 = max(m1, q[1]), q += 2.
#define ATTN_MAX_PAIR                 \
  "ldrd   %[a], %[b], [%[q]], #8\n\t" \
  "cmp    %[a], %[m0]\n\t"            \
  "it     gt\n\t"                     \
  "movgt  %[m0], %[a]\n\t"            \
  "cmp    %[b], %[m1]\n\t"            \
  "it     gt\n\t"                     \
  "movgt  %[m1], %[b]\n\t"
    __asm__("1:\n\t" ATTN_MAX_PAIR ATTN_MAX_PAIR
            "cmp    %[q], %[end]\n\t"
            "bne    1b\n\t"
            : [q] "+r"(q), [m0] "+r"(m0), [m1] "+r"(m1), [a] "=&r"(a), [b] "=&r"(b)
            : [end] "r"(q4)
            : "cc", "memory");
#undef ATTN_MAX_PAIR
  }
#endif
  for (; q != row + end; ++q) m0 = *q > m0 ? *q : m0;
  const int32_t smax = m0 > m1 ? m0 : m1;

  // Pass 1: e_j over s_j, and their sum: the pairs from begin in asm
  // (LDRD / STRD on ARMv7-M need word alignment only), the last score alone
  // if their number is odd.
  const FusedExp fx = fused_exp_constants(sm);
  const uint32_t step = fx.step;
  const int32_t limit = fx.limit;
  uint32_t sum = 0;
  int32_t* p = row + begin;
  int32_t* const pairs_end = p + ((row + end - p) & ~ptrdiff_t{1});
#if !defined(__OPTIMIZE__)
  // -O0 (a debug build) cannot give the asm its 11 registers: the same exps in C.
  for (; p != pairs_end; ++p) {
    const uint32_t e = fused_exp(static_cast<uint32_t>(smax) - static_cast<uint32_t>(*p), step, limit);
    *p = static_cast<int32_t>(e);
    sum += e;
  }
#else
  if (p != pairs_end) {
    int32_t s0, s1, x, m;  // 13 asm operands: fit beside a frame pointer (GCC 12, -O1 to -O3, -Os)
    // Two pairs per iteration (an odd number of pairs enters at the second).
    __asm__ volatile(
        "sub    %[x], %[end], %[p]\n\t"
        "tst    %[x], #8\n\t"
        "bne    2f\n\t"
        "1:\n\t"
        "ldrd   %[s0], %[s1], [%[p]]\n\t" ATTN_EXP_SCORE("s0") ATTN_EXP_SCORE("s1")
        "strd   %[s0], %[s1], [%[p]], #8\n\t"
        "2:\n\t"
        "ldrd   %[s0], %[s1], [%[p]]\n\t" ATTN_EXP_SCORE("s0") ATTN_EXP_SCORE("s1")
        "strd   %[s0], %[s1], [%[p]], #8\n\t"
        "cmp    %[p], %[end]\n\t"
        "bne    1b\n\t"
        : [p] "+r"(p), [sum] "+r"(sum), [s0] "=&r"(s0), [s1] "=&r"(s1), [x] "=&r"(x), [m] "=&r"(m)
        : [end] "r"(pairs_end), [floor] "r"(static_cast<uint32_t>(smax) - static_cast<uint32_t>(limit)),
          [step] "r"(step), [top] "r"(static_cast<uint32_t>(smax) * step), [tab] "r"(kExp2Table),
          [c17] "r"(int32_t{1} << 17)
        : "cc", "memory");
  }
#endif
  if (p != row + end) {
    const uint32_t e = fused_exp(static_cast<uint32_t>(smax) - static_cast<uint32_t>(*p), step, limit);
    *p = static_cast<int32_t>(e);
    sum += e;
  }
  return reciprocal(sum);
}

}  // namespace

uint32_t softmax_exps_row_dsp(int32_t* row, int32_t begin, int32_t end, int32_t n, const FusedSoftmax& sm) {
  for (int32_t j = 0; j < begin; ++j) row[j] = 0;
  for (int32_t j = end; j < n; ++j) row[j] = 0;
  return begin < end ? exps_pass(row, begin, end, sm) : 0;  // fully masked: all-zero weights
}

void softmax_fused_row_dsp(int32_t* row, int32_t begin, int32_t end, int32_t n, const FusedSoftmax& sm) {
  // Output: int16 probabilities [n] over the first 2n bytes of row.
  if (begin >= end) {  // fully masked: all-zero weights
    for (int32_t j = 0; j < n; ++j) store_prob(row, j, 0);
    return;
  }
  const uint32_t recip = exps_pass(row, begin, end, sm);

  // Pass 2: p_j as int16 at bytes [2j, 2j + 2) (inside entry j / 2 <= j:
  // already read). Pairs (j, j + 1) with j even from an even start.
  int32_t k = begin;
  if ((k & 1) != 0) {
    store_prob(
        row, k,
        static_cast<int32_t>((uint64_t{static_cast<uint32_t>(row[k])} * recip + (uint64_t{1} << 31)) >> 32));
    ++k;
  }
  const int32_t k2 = k + ((end - k) & ~int32_t{1});
  if (k < k2) {
    const int32_t* src = row + k;
    const int32_t* const src_end = row + k2;
    auto* dst = reinterpret_cast<unsigned char*>(row) + 2 * static_cast<ptrdiff_t>(k);  // 4-byte aligned
    uint32_t e0, e1, h0, h1;
    __asm__ volatile(
        "1:\n\t"
        "ldrd   %[e0], %[e1], [%[src]], #8\n\t"
        "umull  %[e0], %[h0], %[e0], %[r]\n\t"
        "umull  %[e1], %[h1], %[e1], %[r]\n\t"
        "add    %[h0], %[h0], %[e0], lsr #31\n\t"
        "add    %[h1], %[h1], %[e1], lsr #31\n\t"
        "pkhbt  %[h0], %[h0], %[h1], lsl #16\n\t"
        "str    %[h0], [%[dst]], #4\n\t"
        "cmp    %[src], %[end]\n\t"
        "bne    1b\n\t"
        : [src] "+r"(src), [dst] "+r"(dst), [e0] "=&r"(e0), [e1] "=&r"(e1), [h0] "=&r"(h0), [h1] "=&r"(h1)
        : [end] "r"(src_end), [r] "r"(recip)
        : "cc", "memory");
    k = k2;
  }
  if (k < end) {
    store_prob(
        row, k,
        static_cast<int32_t>((uint64_t{static_cast<uint32_t>(row[k])} * recip + (uint64_t{1} << 31)) >> 32));
  }
  for (int32_t i = 0; i < begin; ++i) store_prob(row, i, 0);
  for (int32_t i = end; i < n; ++i) store_prob(row, i, 0);
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_DSP
