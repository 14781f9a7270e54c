// linear, float32, Cortex-M55 Helium (MVE): y[M,N] = x[M,K] w[N,K]^T + bias[N].
//
// x and w are both read along K, so the kernel is made of dot products: one
// x row against CB <= 4 weight rows, 4 floats of K per step, one accumulator
// vector per weight row (per step: 1 + 4 loads, 4 VFMA for 16 MACs). Helium
// has 8 vector registers: 4 accumulators, the x vector and a weight vector
// fit; a second x row (2 x 4 blocks) would spill. The last K % 4 columns are
// one tail-predicated step (VCTP: lanes past K load as 0).
//
// Helium has no floating-point add across lanes: the 4 accumulators are
// stored and loaded back transposed by one VLD4, then 3 adds give
// y[m][n .. n + 4) as one vector; bias added, stored (predicated for the last
// N % 4 outputs).
#include "kernels/arch.h"

#if ATTN_HAVE_MVE_FP
#include <arm_mve.h>

#include <cstddef>

#include "kernels/kernels_f32.h"
#include "kernels/tile_driver.h"

namespace attn {
namespace detail {
namespace {

// [sum(a0), sum(a1), sum(a2), sum(a3)]: the four stored one after another,
// then VLD4 loads them back deinterleaved (transposed): lane c of vector i is
// a_c[i], so the 4 vectors add up to the 4 sums.
inline float32x4_t sum4(float32x4_t a0, float32x4_t a1, float32x4_t a2, float32x4_t a3) {
  float t[16];  // [4 vectors, 4 lanes]
  vst1q_f32(t, a0);
  vst1q_f32(t + 4, a1);
  vst1q_f32(t + 8, a2);
  vst1q_f32(t + 12, a3);
  const float32x4x4_t v = vld4q_f32(t);
  return vaddq_f32(vaddq_f32(v.val[0], v.val[1]), vaddq_f32(v.val[2], v.val[3]));
}

// 4 floats at p, then p += 4. For GCC 12 the empty asm hides how the row
// pointers relate: otherwise it rewrites them as bases plus one common index,
// an add before every load (15 instructions a step instead of 10); this way
// each load post-increments its own pointer, as clang-14 does anyway.
inline float32x4_t load_next(const float*& p) {
  const float32x4_t v = vld1q_f32(p);
  p += 4;
#if !defined(__clang__)
  __asm__("" : "+r"(p));
#endif
  return v;
}

// y[0 .. CB) = x[0, K) . w[c][0, K) (+ bias[c]), w row c at w + c * ldw.
template <size_t CB>
inline void dot_block(const float* x, const float* w, ptrdiff_t ldw, int32_t K, const float* bias, float* y) {
  const float* wr[CB];  // CB weight rows [K], advanced 4 columns per step
  ATTN_UNROLL
  for (size_t c = 0; c < CB; ++c) wr[c] = w + static_cast<ptrdiff_t>(c) * ldw;
  const float32x4_t zero = vdupq_n_f32(0.0f);
  float32x4_t acc[4] = {zero, zero, zero, zero};  // acc[c]: 4 partial sums; past CB stay 0
  for (int32_t k4 = K >> 2; k4 > 0; --k4) {
    const float32x4_t xv = load_next(x);
    ATTN_UNROLL
    for (size_t c = 0; c < CB; ++c) acc[c] = vfmaq_f32(acc[c], xv, load_next(wr[c]));
  }
  if ((K & 3) != 0) {  // the last K % 4 columns, 0 in the lanes past K
    const mve_pred16_t live = vctp32q(static_cast<uint32_t>(K & 3));
    const float32x4_t xv = vldrwq_z_f32(x, live);
    ATTN_UNROLL
    for (size_t c = 0; c < CB; ++c) acc[c] = vfmaq_f32(acc[c], xv, vldrwq_z_f32(wr[c], live));
  }
  float32x4_t s = sum4(acc[0], acc[1], acc[2], acc[3]);
  if (CB == 4) {
    if (bias != nullptr) s = vaddq_f32(s, vld1q_f32(bias));
    vst1q_f32(y, s);
  } else {
    const mve_pred16_t out = vctp32q(static_cast<uint32_t>(CB));
    if (bias != nullptr) s = vaddq_f32(s, vldrwq_z_f32(bias, out));
    vstrwq_p_f32(y, s, out);
  }
}

}  // namespace

void linear_f32_mve(ConstMatF32 x, ConstMatF32 w, const float* bias, MatF32 y) {
  const int32_t N = w.rows, K = x.cols;
  const ptrdiff_t ldw = w.stride;
  for (int32_t m = 0; m < x.rows; ++m) {
    const float* xr = x.row(m);  // [K]
    float* yr = y.row(m);        // [N]
    int32_t n = 0;
    for (; n + 4 <= N; n += 4)
      dot_block<4>(xr, w.row(n), ldw, K, bias != nullptr ? bias + n : nullptr, yr + n);
    const float* bn = bias != nullptr ? bias + n : nullptr;
    with_size<3>(N - n, [&](auto cb) {  // the last N % 4 outputs
      dot_block<decltype(cb)::value>(xr, w.row(n), ldw, K, bn, yr + n);
    });
  }
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_MVE_FP
