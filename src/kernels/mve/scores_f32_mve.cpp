// scores, float32, Cortex-M55 Helium (MVE): s[T,S] = q[T,d] k[S,d]^T * scale.
//
// The vector lanes are 4 keys: for each column c of the head, one gather load
// (VLDRW with offsets 0, ks, 2 ks, 3 ks) reads k[j .. j + 4)[c], and each of
// R <= 4 query rows adds it times q[t][c] (vector-by-scalar VFMA: the query
// value stays in a core register). Per column: 1 gather, R scalar loads and
// R VFMA for 4 R MACs, and no add across lanes, which Helium lacks for
// floats: the head dims of the MCU shapes (4 to 16) are too short for dot
// products along d to repay one. The outputs are scaled and stored as whole
// vectors; the last S % 4 keys gather with their missing lanes pointed at the
// block's first key (in bounds, never stored) and store predicated (VCTP).
#include "kernels/arch.h"

#if ATTN_HAVE_MVE_FP
#include <arm_mve.h>

#include <cstddef>

#include "kernels/kernels_f32.h"
#include "kernels/tile_driver.h"

namespace attn {
namespace detail {
namespace {

// s[t0 + r][j0 .. j0 + 4) for r < R, from keys at k (key j0) + offs[lane];
// kTail: only the lanes in `live` are stored.
template <size_t R, bool kTail>
inline void scores_block(ConstMatF32 q, int32_t t0, const float* k, uint32x4_t offs, float scale,
                         mve_pred16_t live, MatF32 s, int32_t j0) {
  const float* qr[R];  // R query rows [d]
  ATTN_UNROLL
  for (size_t r = 0; r < R; ++r) qr[r] = q.row(t0 + static_cast<int32_t>(r));
  float32x4_t acc[R];  // acc[r]: row t0 + r against the 4 keys
  ATTN_UNROLL
  for (size_t r = 0; r < R; ++r) acc[r] = vdupq_n_f32(0.0f);
  for (int32_t c = 0; c < q.cols; ++c) {
    const float32x4_t kc = vldrwq_gather_shifted_offset_f32(k + c, offs);  // k[j0 + lane][c]
    ATTN_UNROLL
    for (size_t r = 0; r < R; ++r) acc[r] = vfmaq_n_f32(acc[r], kc, qr[r][c]);
  }
  ATTN_UNROLL
  for (size_t r = 0; r < R; ++r) {
    float* out = s.row(t0 + static_cast<int32_t>(r)) + j0;
    if (kTail) {
      vstrwq_p_f32(out, vmulq_n_f32(acc[r], scale), live);
    } else {
      vst1q_f32(out, vmulq_n_f32(acc[r], scale));
    }
  }
}

// Query rows [t0, t0 + R) against all S keys.
template <size_t R>
inline void scores_rows(ConstMatF32 q, int32_t t0, ConstMatF32 k, float scale, MatF32 s) {
  const uint32_t ks = static_cast<uint32_t>(k.stride);
  const uint32x4_t offs = vmulq_n_u32(vidupq_n_u32(0, 1), ks);  // {0, 1, 2, 3} key rows
  const int32_t S = k.rows;
  int32_t j = 0;
  for (; j + 4 <= S; j += 4) scores_block<R, false>(q, t0, k.row(j), offs, scale, 0, s, j);
  if (j < S) {  // the last S % 4 keys: lanes past S re-read key j (offset 0), stored by none
    const mve_pred16_t live = vctp32q(static_cast<uint32_t>(S - j));
    scores_block<R, true>(q, t0, k.row(j), vpselq_u32(offs, vdupq_n_u32(0), live), scale, live, s, j);
  }
}

}  // namespace

void scores_f32_mve(ConstMatF32 q, ConstMatF32 k, float scale, MatF32 s) {
  const int32_t T = q.rows;
  int32_t t = 0;
  for (; t + 4 <= T; t += 4) scores_rows<4>(q, t, k, scale, s);
  with_size<3>(T - t,
               [&](auto r) { scores_rows<decltype(r)::value>(q, t, k, scale, s); });  // the last T % 4 rows
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_MVE_FP
