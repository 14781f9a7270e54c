// weighted sum, float32, Cortex-M55 Helium (MVE): o[T,d] = p[T,S] v[S,d].
//
// The vector lanes are columns of o: blocks of R <= 2 query rows by V <= 2
// vectors (8 columns), and for each key j one load of v[j] per vector and
// one vector-by-scalar VFMA per row and vector, the weight p[t][j] in a core
// register (per key: V loads, R scalar loads and R V VFMA; 2 x 2: 8 for 16
// MACs). 2 x 2 leaves 4 of the 8 vector registers free; 4 x 2 would spill.
// Column tails: a block as wide as the columns left (one vector for 4 or
// fewer), its last vector loaded and stored tail-predicated (VCTP), so no
// lane past d is read or written. Unlike ref, zero weights (masked keys) are
// not skipped: they add 0 x v.
#include "kernels/arch.h"

#if ATTN_HAVE_MVE_FP
#include <arm_mve.h>

#include <cstddef>

#include "kernels/kernels_f32.h"

namespace attn {
namespace detail {
namespace {

// o[t0 + r][c0 .. c0 + 4 V) for r < R; kTail: only nc < 4 V columns are live.
template <size_t R, size_t V, bool kTail>
inline void ws_block(ConstMatF32 p, int32_t t0, ConstMatF32 v, int32_t c0, int32_t nc, MatF32 o) {
  mve_pred16_t live[V];  // per vector: its lanes inside [c0, c0 + nc)
  ATTN_UNROLL
  for (size_t i = 0; i < V; ++i) {
    const int32_t left = nc - 4 * static_cast<int32_t>(i);  // live columns from this vector on
    live[i] = kTail ? vctp32q(static_cast<uint32_t>(left > 0 ? left : 0)) : 0;
  }
  const float* pr[R];  // R weight rows [S]
  ATTN_UNROLL
  for (size_t r = 0; r < R; ++r) pr[r] = p.row(t0 + static_cast<int32_t>(r));
  float32x4_t acc[R][V];
  ATTN_UNROLL
  for (size_t r = 0; r < R; ++r) {
    ATTN_UNROLL
    for (size_t i = 0; i < V; ++i) acc[r][i] = vdupq_n_f32(0.0f);
  }
  const float* vr = v.data + c0;  // v[j][c0 ..], j = 0
  for (int32_t j = 0; j < p.cols; ++j, vr += v.stride) {
    float32x4_t vv[V];
    ATTN_UNROLL
    for (size_t i = 0; i < V; ++i) vv[i] = kTail ? vldrwq_z_f32(vr + 4 * i, live[i]) : vld1q_f32(vr + 4 * i);
    ATTN_UNROLL
    for (size_t r = 0; r < R; ++r) {
      const float w = pr[r][j];
      ATTN_UNROLL
      for (size_t i = 0; i < V; ++i) acc[r][i] = vfmaq_n_f32(acc[r][i], vv[i], w);
    }
  }
  ATTN_UNROLL
  for (size_t r = 0; r < R; ++r) {
    float* out = o.row(t0 + static_cast<int32_t>(r)) + c0;
    ATTN_UNROLL
    for (size_t i = 0; i < V; ++i) {
      if (kTail) {
        vstrwq_p_f32(out + 4 * i, acc[r][i], live[i]);
      } else {
        vst1q_f32(out + 4 * i, acc[r][i]);
      }
    }
  }
}

// Rows [t0, t0 + R) over all d columns: 8 at a time, then the rest.
template <size_t R>
inline void ws_rows(ConstMatF32 p, int32_t t0, ConstMatF32 v, MatF32 o) {
  const int32_t d = v.cols;
  int32_t c = 0;
  for (; c + 8 <= d; c += 8) ws_block<R, 2, false>(p, t0, v, c, 8, o);
  const int32_t rest = d - c;
  if (rest == 4) {
    ws_block<R, 1, false>(p, t0, v, c, 4, o);
  } else if (rest > 4) {
    ws_block<R, 2, true>(p, t0, v, c, rest, o);
  } else if (rest > 0) {
    ws_block<R, 1, true>(p, t0, v, c, rest, o);
  }
}

}  // namespace

void weighted_sum_f32_mve(ConstMatF32 p, ConstMatF32 v, MatF32 o) {
  int32_t t = 0;
  for (; t + 2 <= p.rows; t += 2) ws_rows<2>(p, t, v, o);
  if (t < p.rows) ws_rows<1>(p, t, v, o);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_MVE_FP
