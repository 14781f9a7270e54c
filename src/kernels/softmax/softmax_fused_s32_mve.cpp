// The fused attention softmax, int32 scores -> Q0.15 probabilities, Cortex-M55
// Helium (MVE): the arithmetic of softmax_fused_s32_ref.cpp, four scores per
// vector. The exp table is read by a gather (VLDRH.U32 shifted offsets), the
// per-lane octave shift by VSHL with negative counts, the rounding halving
// by VRSHR #1, the normalization (e * R + 2^31) >> 32 by VRMULH.U32, and the
// int16 probabilities are written by a truncating VSTRH.32; tails and masked
// keys by predication. Every step is the ref's integer step: bit-exact.
#include "internal/arch.h"

#if ATTN_HAVE_MVE
#include <arm_mve.h>

#include <cstring>

#include "internal/exp2_table.h"
#include "internal/fixed_point.h"
#include "internal/kernels_fixed.h"

namespace attn {
namespace detail {
namespace {

inline void store_zero(int32_t* row, int32_t j) {
  const int16_t v = 0;
  std::memcpy(reinterpret_cast<unsigned char*>(row) + 2 * static_cast<ptrdiff_t>(j), &v, sizeof v);
}

}  // namespace

void softmax_fused_row_mve(int32_t* row, int32_t begin, int32_t end, int32_t n, const FusedSoftmax& sm) {
  // Output: int16 probabilities [n] over the first 2n bytes of row.
  if (begin >= end) {
    for (int32_t j = 0; j < n; ++j) store_zero(row, j);
    return;
  }
  int32_t smax = row[begin];
  for (int32_t j = begin; j < end; j += 4) {
    const mve_pred16_t p = vctp32q(static_cast<uint32_t>(end - j));
    smax = vmaxvq_p_s32(smax, vldrwq_z_s32(row + j, p), p);
  }

  // Pass 1: e_j in place of s_j, and their sum.
  const uint32x4_t vmax = vdupq_n_u32(static_cast<uint32_t>(smax));
  const uint32x4_t vlimit = vdupq_n_u32(static_cast<uint32_t>(sm.diff_limit));
  const int32x4_t vshift = vdupq_n_s32(sm.exp_shift);
  const uint32x4_t vmult = vdupq_n_u32(sm.exp_multiplier);
  uint32_t* urow = reinterpret_cast<uint32_t*>(row);
  uint32_t sum = 0;
  for (int32_t j = begin; j < end; j += 4) {
    const mve_pred16_t p = vctp32q(static_cast<uint32_t>(end - j));
    const uint32x4_t u = vsubq_u32(vmax, vldrwq_z_u32(urow + j, p));
    const mve_pred16_t live = vcmpcsq_m_u32(vlimit, u, p);         // u <= diff_limit, and j < end
    const uint32x4_t t = vmulhq_u32(vshlq_u32(u, vshift), vmult);  // < 2^20 where live
    const uint32x4_t idx =
        vandq_u32(vshrq_n_u32(t, kExp2FracBits - kExp2TableBits), vdupq_n_u32((1u << kExp2TableBits) - 1));
    const uint32x4_t x = vshlq_n_u32(vldrhq_gather_shifted_offset_u32(kExp2Table, idx), 1);
    const int32x4_t octave = vnegq_s32(vreinterpretq_s32_u32(vshrq_n_u32(t, kExp2FracBits)));
    const uint32x4_t e = vpselq_u32(vrshrq_n_u32(vshlq_u32(x, octave), 1), vdupq_n_u32(0), live);
    vstrwq_p_u32(urow + j, e, p);
    sum = vaddvaq_p_u32(sum, e, p);
  }

  // The reciprocal, exactly as the ref.
  const int h = fp::count_leading_zeros(sum);
  const int32_t a = static_cast<int32_t>((sum << h) - (uint32_t{1} << 31));
  const uint32_t r31 = static_cast<uint32_t>(fp::one_over_one_plus_x_for_x_in_0_1(a));
  const int rs = h + kProbBits - 30;
  const uint32_t r = rs >= 0 ? r31 << rs : r31 >> -rs;
  const uint32x4_t recip = vdupq_n_u32(r - (r >> kProbBits));

  // Pass 2: p_j = (e_j * recip + 2^31) >> 32 as int16 over the start of the
  // row. The store of entries [j, j + 4) covers int32 entries j / 2 .. j / 2 + 1,
  // read by this or an earlier iteration (or masked).
  uint16_t* prob = reinterpret_cast<uint16_t*>(row);
  for (int32_t j = begin; j < end; j += 4) {
    const mve_pred16_t p = vctp32q(static_cast<uint32_t>(end - j));
    vstrhq_p_u32(prob + j, vrmulhq_u32(vldrwq_z_u32(urow + j, p), recip), p);
  }
  for (int32_t j = 0; j < begin; ++j) store_zero(row, j);
  for (int32_t j = end; j < n; ++j) store_zero(row, j);
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_MVE
