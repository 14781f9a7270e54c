// The fused attention softmax, int32 scores -> Q0.15 probabilities, NEON
// (AArch64 and ARMv7-A): softmax_fused_row_ref's integer arithmetic (see that
// file for the formulas), bit-exact, 4 keys per step:
//   max         vmaxq_s32
//   e_j         u = smax - s (uint32), t = u * step mod 2^32 (vmulq_u32), the
//               table entries loaded lane by lane (NEON has no gather), the
//               per-lane rounding octave shift by vrshlq_u32 with negated counts; e = 0 where
//               u > diff_limit (unsigned compare); sum in uint32 lanes (ref's
//               sum is a uint32 too: addition mod 2^32 in any order)
//   1 / sum     scalar, fused_softmax_reciprocal (ref's)
//   p_j         (e * recip + 2^31) >> 32 in one rounding narrow (vraddhn_u64
//               with zero: e < 2^17, so the 64-bit sum cannot wrap), narrowed
//               to int16 and stored over bytes [2 j, 2 j + 8): int32 entries
//               [j / 2, j / 2 + 2), read already (j / 2 + 1 <= j + 3).
// Key tails (< 4) are scalar.
#include "kernels/arch.h"

#if ATTN_HAVE_NEON64 || ATTN_HAVE_NEON32
#include <arm_neon.h>

#include <cstring>

#include "kernels/exp2_table.h"
#include "kernels/kernels_fixed.h"

namespace attn {
namespace detail {
namespace {

inline int32_t max_lanes(int32x4_t v) {
#if ATTN_HAVE_NEON64
  return vmaxvq_s32(v);
#else
  int32x2_t m = vpmax_s32(vget_low_s32(v), vget_high_s32(v));
  m = vpmax_s32(m, m);
  return vget_lane_s32(m, 0);
#endif
}

inline uint32_t sum_lanes(uint32x4_t v) {
#if ATTN_HAVE_NEON64
  return vaddvq_u32(v);
#else
  uint32x2_t s = vadd_u32(vget_low_u32(v), vget_high_u32(v));
  s = vpadd_u32(s, s);
  return vget_lane_u32(s, 0);
#endif
}

}  // namespace

void softmax_fused_row_neon(int32_t* row, int32_t begin, int32_t end, int32_t n, const FusedSoftmax& sm) {
  // Output: int16 probabilities [n] over the first 2n bytes of row.
  if (begin >= end) {
    for (int32_t j = 0; j < n; ++j) store_fused_prob(row, j, 0);
    return;
  }
  const FusedSoftmax c = sm;  // a local copy: row stores could alias sm as far as the compiler knows
  int32_t j = begin;
  int32x4_t vmax = vdupq_n_s32(row[begin]);
  for (; j + 4 <= end; j += 4) vmax = vmaxq_s32(vmax, vld1q_s32(row + j));
  int32_t smax = max_lanes(vmax);
  for (; j < end; ++j) smax = row[j] > smax ? row[j] : smax;

  // Pass 1: e_j in place of s_j, and their sum.
  const uint32x4_t vsmax = vdupq_n_u32(static_cast<uint32_t>(smax));
  const FusedExp fx = fused_exp_constants(c);
  const uint32_t step = fx.step;
  const uint32x4_t vlimit = vdupq_n_u32(static_cast<uint32_t>(fx.limit));
  const uint32x4_t vstep = vdupq_n_u32(step);
  uint32x4_t vsum = vdupq_n_u32(0);
  j = begin;
  for (; j + 4 <= end; j += 4) {
    int32_t* pj = row + j;  // [4]
    const uint32x4_t u = vsubq_u32(vsmax, vreinterpretq_u32_s32(vld1q_s32(pj)));
    const uint32x4_t keep = vcleq_u32(u, vlimit);  // u <= diff_limit
    const uint32x4_t t = vmulq_u32(u, vstep);      // mod 2^32, as in ref
    // The table entries, lane by lane. Lanes past diff_limit read some entry
    // (the index is masked to the table) and are zeroed by keep below.
    alignas(16) uint32_t ti[4];
    vst1q_u32(ti, vandq_u32(vshrq_n_u32(t, kExpPhaseIndexShift), vdupq_n_u32((1u << kExp2TableBits) - 1)));
    alignas(16)
        const uint32_t tx[4] = {kExp2Table[ti[0]], kExp2Table[ti[1]], kExp2Table[ti[2]], kExp2Table[ti[3]]};
    // x / 2^(t >> 28) rounded half up (the octave in [0, 15]): VRSHL by the negated octave.
    const uint32x4_t shifted =
        vrshlq_u32(vld1q_u32(tx), vnegq_s32(vreinterpretq_s32_u32(vshrq_n_u32(t, kExpPhaseOctaveShift))));
    const uint32x4_t e = vandq_u32(keep, shifted);
    vst1q_s32(pj, vreinterpretq_s32_u32(e));
    vsum = vaddq_u32(vsum, e);
  }
  uint32_t sum = sum_lanes(vsum);
  for (; j < end; ++j) {
    const uint32_t e = fused_exp(static_cast<uint32_t>(smax) - static_cast<uint32_t>(row[j]), step, fx.limit);
    row[j] = static_cast<int32_t>(e);
    sum += e;
  }
  const uint32_t recip = fused_softmax_reciprocal(sum);

  // Pass 2: p_j as int16 over the start of the row.
  const uint32x2_t vrecip = vdup_n_u32(recip);
  const uint64x2_t zero = vdupq_n_u64(0);
  j = begin;
  for (; j + 4 <= end; j += 4) {
    const uint32x4_t e = vreinterpretq_u32_s32(vld1q_s32(row + j));
    const uint32x4_t p = vcombine_u32(vraddhn_u64(vmull_u32(vget_low_u32(e), vrecip), zero),
                                      vraddhn_u64(vmull_u32(vget_high_u32(e), vrecip), zero));  // <= 32767
    const uint16x4_t p16 = vmovn_u32(p);
    // memcpy: the aliasing-safe store of int16 values into the int32 row (one 8-byte store).
    std::memcpy(reinterpret_cast<unsigned char*>(row) + 2 * static_cast<ptrdiff_t>(j), &p16, sizeof p16);
  }
  for (; j < end; ++j) store_fused_prob(row, j, fused_prob(static_cast<uint32_t>(row[j]), recip));
  for (int32_t k = 0; k < begin; ++k) store_fused_prob(row, k, 0);
  for (int32_t k = end; k < n; ++k) store_fused_prob(row, k, 0);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON64 || ATTN_HAVE_NEON32
