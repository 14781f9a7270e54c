// scores, int16, Cortex-M DSP extension: s = round(q k^T / 2^shift),
// scores_s16_ref's arithmetic, bit-exact.
//
// q and k are both int16, so a word of each is already an SMLALD pair
// ((q[c], q[c + 1]) against (k[c], k[c + 1])): SMLALD adds both products
// into a 64-bit accumulator exactly, which is ref's int64 sum (the products
// reach 2^30, so a 32-bit SMLAD pair sum could wrap). Two query rows per
// pass over the keys, each key word loaded once for both; the accumulators
// start at the rounding half, and the score is the low word of the sum
// shifted right (two 32-bit shifts and an OR for shifts in [1, 31]; other
// shifts, which the forward never has, go through scores_s16_ref).
#include "kernels/arch.h"

#if ATTN_HAVE_DSP
#include <arm_acle.h>

#include "kernels/dsp/dsp_s8.h"
#include "kernels/kernels_fixed.h"

#include <cstdint>

namespace attn {
namespace detail {
namespace {

// (int32) (a >> sh) for sh in [1, 31] (inv = 32 - sh).
inline int32_t narrow(int64_t a, int32_t sh, int32_t inv) {
  const uint64_t u = static_cast<uint64_t>(a);
  return static_cast<int32_t>((static_cast<uint32_t>(u) >> sh) | (static_cast<uint32_t>(u >> 32) << inv));
}

// Rows t and t + 1 of s (two = false: row t alone, its sums computed twice).
void rows2(ConstMatS16 q, ConstMatS16 k, int64_t half, int32_t sh, MatS32 s, int32_t t, bool two) {
  const int32_t d = q.cols;
  const int32_t d4 = d & ~3;
  const int16_t* q0 = q.row(t);                // [d]
  const int16_t* q1 = q.row(two ? t + 1 : t);  // [d]
  int32_t* s0 = s.row(t);                      // [S]
  int32_t* s1 = two ? s.row(t + 1) : s0;       // [S]
  const int32_t inv = 32 - sh;
  for (int32_t j = 0; j < k.rows; ++j) {
    const int16_t* kr = k.row(j);  // [d]
    int64_t a0 = half, a1 = half;
    int32_t c = 0;
    for (; c < d4; c += 4) {
      const int32_t k0 = dsp::load2x16(kr + c), k1 = dsp::load2x16(kr + c + 2);
      a0 = __smlald(dsp::load2x16(q0 + c), k0, a0);
      a1 = __smlald(dsp::load2x16(q1 + c), k0, a1);
      a0 = __smlald(dsp::load2x16(q0 + c + 2), k1, a0);
      a1 = __smlald(dsp::load2x16(q1 + c + 2), k1, a1);
    }
    for (; c < d; ++c) {
      a0 += int32_t{q0[c]} * int32_t{kr[c]};
      a1 += int32_t{q1[c]} * int32_t{kr[c]};
    }
    s1[j] = narrow(a1, sh, inv);  // row t last: when two is false, s1 is s0
    s0[j] = narrow(a0, sh, inv);
  }
}

// Row t of s for head_dim 4 (the forward's 8-head shapes): q's two words in
// registers, the key loop in asm (GCC spills its int64 sum): per key two
// key words, two SMLALDs from the rounding half (< 2^31: high word 0) and
// the shift, 13 instructions.
void row_d4(ConstMatS16 q, ConstMatS16 k, int32_t half, int32_t sh, MatS32 s, int32_t t) {
  if (k.rows == 0) return;
  const int32_t x0 = dsp::load2x16(q.row(t)), x1 = dsp::load2x16(q.row(t) + 2);
  int32_t* out = s.row(t);  // [S]
  int32_t* const end = out + k.rows;
  const int32_t inv = 32 - sh;
  const int32_t ks = static_cast<int32_t>(k.stride * 2);  // bytes between keys
  const int16_t* kr = k.data;                             // [4]
  int32_t k0, k1, lo, hi;
  __asm__ volatile(
      "1:\n\t"
      "ldr    %[k0], [%[kr]]\n\t"
      "ldr    %[k1], [%[kr], #4]\n\t"
      "add    %[kr], %[kr], %[ks]\n\t"
      "mov    %[lo], %[half]\n\t"
      "movs   %[hi], #0\n\t"
      "smlald %[lo], %[hi], %[x0], %[k0]\n\t"
      "smlald %[lo], %[hi], %[x1], %[k1]\n\t"
      "lsr    %[lo], %[lo], %[sh]\n\t"
      "lsl    %[hi], %[hi], %[inv]\n\t"
      "orr    %[lo], %[lo], %[hi]\n\t"
      "str    %[lo], [%[out]], #4\n\t"
      "cmp    %[out], %[end]\n\t"
      "bne    1b\n\t"
      : [kr] "+r"(kr), [out] "+r"(out), [k0] "=&r"(k0), [k1] "=&r"(k1), [lo] "=&r"(lo), [hi] "=&r"(hi)
      :
      [x0] "r"(x0), [x1] "r"(x1), [ks] "r"(ks), [half] "r"(half), [sh] "r"(sh), [inv] "r"(inv), [end] "r"(end)
      : "cc", "memory");
}

}  // namespace

void scores_s16_dsp(ConstMatS16 q, ConstMatS16 k, int32_t score_shift, MatS32 s) {
  if (score_shift < 1 || score_shift > 31) {
    scores_s16_ref(q, k, score_shift, s);
    return;
  }
  const int64_t half = int64_t{1} << (score_shift - 1);
  if (q.cols == 4) {
    for (int32_t t = 0; t < q.rows; ++t) row_d4(q, k, static_cast<int32_t>(half), score_shift, s, t);
    return;
  }
  for (int32_t t = 0; t < q.rows; t += 2) rows2(q, k, half, score_shift, s, t, t + 1 < q.rows);
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_DSP
