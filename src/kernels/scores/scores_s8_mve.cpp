// scores, int8, Cortex-M55 Helium (MVE): s = round((q - zq)(k - zk)^T / 2^shift).
// Expanded as q.k - zk sum(q) - zq sum(k) + d zq zk: one VMLADAVA per 16
// products against up to four query rows, sum(k) by VADDVA on the loaded key
// vector, tails by tail predication. For head_dim <= 16 the query rows stay
// in registers and the four rows' scores of a key are finished as one
// vector (VSHL by -shift is the ref's arithmetic >>) and scattered to their
// rows. Every term is exact in int32 (|.| < 2^28 for d < 2^14) and the sum is
// the ref's sum: bit-exact.
#include "internal/arch.h"

#if ATTN_HAVE_MVE
#include <arm_mve.h>

#include "internal/kernels_fixed.h"

namespace attn {
namespace detail {
namespace {

template <int R>
void rows(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t half, int32_t shift, MatS32 s,
          int32_t t) {
  constexpr size_t kR = static_cast<size_t>(R);
  const int32_t d = q.cols;
  const int8_t* a[kR];  // query rows [d]
  int32_t base[kR];     // d zq zk - zk sum(q)
  for (size_t r = 0; r < kR; ++r) {
    a[r] = q.row(t + static_cast<int32_t>(r));
    int32_t qsum = 0;
    for (int32_t c = 0; c < d; c += 16) {
      const mve_pred16_t pred = vctp8q(static_cast<uint32_t>(d - c));
      qsum = vaddvaq_p_s8(qsum, vldrbq_z_s8(a[r] + c, pred), pred);
    }
    base[r] = d * zq * zk - zk * qsum;
  }
  if (d <= 16) {  // one vector per row: the query rows stay in registers
    const mve_pred16_t pred = vctp8q(static_cast<uint32_t>(d));
    int8x16_t qv[kR];
    for (size_t r = 0; r < kR; ++r) qv[r] = vldrbq_z_s8(a[r], pred);
    int32_t bases[4] = {};  // [R] used
    for (size_t r = 0; r < kR; ++r) bases[r] = base[r] + half;
    const int32x4_t vbase = vldrwq_s32(bases);
    const int32x4_t vshift = vdupq_n_s32(-shift);
    // Byte offsets of rows t .. t + 3 of s from row t; lanes >= R are not stored.
    const uint32x4_t offsets = vmulq_n_u32(vidupq_n_u32(0, 1), static_cast<uint32_t>(s.stride) * 4u);
    const mve_pred16_t rows_pred = vctp32q(static_cast<uint32_t>(R));
    int32_t* out = s.row(t);
    for (int32_t j = 0; j < k.rows; ++j) {
      const int8x16_t kv = vldrbq_z_s8(k.row(j), pred);
      int32x4_t acc = vdupq_n_s32(-zq * vaddvq_p_s8(kv, pred));
      int32_t dots[4] = {};  // [R] used
      for (size_t r = 0; r < kR; ++r) dots[r] = vmladavq_p_s8(qv[r], kv, pred);
      acc = vaddq_s32(vaddq_s32(acc, vbase), vldrwq_s32(dots));
      vstrwq_scatter_offset_p_s32(out + j, offsets, vshlq_s32(acc, vshift), rows_pred);
    }
    return;
  }
  for (int32_t j = 0; j < k.rows; ++j) {
    const int8_t* b = k.row(j);  // [d]
    int32_t acc[kR] = {};
    int32_t ksum = 0;
    for (int32_t c = 0; c < d; c += 16) {
      const mve_pred16_t pred = vctp8q(static_cast<uint32_t>(d - c));
      const int8x16_t kv = vldrbq_z_s8(b + c, pred);
      ksum = vaddvaq_p_s8(ksum, kv, pred);
      for (size_t r = 0; r < kR; ++r) acc[r] = vmladavaq_p_s8(acc[r], vldrbq_z_s8(a[r] + c, pred), kv, pred);
    }
    for (size_t r = 0; r < kR; ++r) {
      s.row(t + static_cast<int32_t>(r))[j] = (acc[r] + base[r] - zq * ksum + half) >> shift;
    }
  }
}

}  // namespace

void scores_s8_mve(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t score_shift, MatS32 s) {
  const int32_t half = score_shift > 0 ? int32_t{1} << (score_shift - 1) : 0;
  int32_t t = 0;
  for (; t + 4 <= q.rows; t += 4) rows<4>(q, zq, k, zk, half, score_shift, s, t);
  if (q.rows - t == 3) rows<3>(q, zq, k, zk, half, score_shift, s, t);
  if (q.rows - t == 2) rows<2>(q, zq, k, zk, half, score_shift, s, t);
  if (q.rows - t == 1) rows<1>(q, zq, k, zk, half, score_shift, s, t);
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_MVE
