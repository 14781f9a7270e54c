// norm, int32 residual rows -> int8 / int16 / int32, Cortex-M55 Helium (MVE):
// NormFixed's arithmetic on four int32 lanes, bit-exact with norm_*_ref.
// The per-row steps (mean, the shifts, the 1/sqrt multiplier R) are the
// shared scalar helpers of kernels/kernels_model_fixed.h; the three passes
// over the row are vector:
//   sum           VADDLVA (int64 across the lanes)
//   max |d|       VQSUB (d = sat32(x - mean)), VMAXAV (|INT32_MIN| = 2^31 unsigned)
//   sum d'^2      VRSHL by -k (round half up, exact), VMLALDAVA (int64)
//   y             VRSHL by 29 - b (u; left shifts never overflow: |d| < 2^b),
//                 VQRDMULH by R (round(u R / 2^31); no saturation: R >= 0),
//                 VQRDMULH by w_i, VADD bias_i, VQRSHL by -shift (rounding
//                 right / saturating left, as shift_round_sat32), VQADD zp,
//                 clamp, narrowing store.
// Tails run predicated (VCTP); y may be x (int32 output, in place): each
// chunk is read before it is written.
#include "kernels/arch.h"

#if ATTN_HAVE_MVE
#include <arm_mve.h>

#include "kernels/kernels_model_fixed.h"

namespace attn {
namespace detail {
namespace {

template <typename Out>
inline void store(Out* p, int32x4_t v, mve_pred16_t m);
template <>
inline void store<int8_t>(int8_t* p, int32x4_t v, mve_pred16_t m) {
  vstrbq_p_s32(p, v, m);
}
template <>
inline void store<int16_t>(int16_t* p, int32x4_t v, mve_pred16_t m) {
  vstrhq_p_s32(p, v, m);
}
template <>
inline void store<int32_t>(int32_t* p, int32x4_t v, mve_pred16_t m) {
  vstrwq_p_s32(p, v, m);
}

template <typename Out>
void norm_rows_mve(ConstMatS32 x, NormKind kind, const NormFixed& p, Matrix<Out> y, int32_t lo, int32_t hi) {
  const int32_t E = x.cols;
  for (int32_t r = 0; r < x.rows; ++r) {
    const int32_t* xr = x.row(r);
    int32_t mean = 0;
    if (kind == NormKind::kLayerNorm) {
      int64_t sum = 0;
      for (int32_t i = 0; i < E; i += 4) {
        const mve_pred16_t m = vctp32q(static_cast<uint32_t>(E - i));
        sum = vaddlvaq_p_s32(sum, vld1q_z_s32(xr + i, m), m);
      }
      mean = norm_mean(sum, E);
    }
    uint32_t max_abs = 0;
    for (int32_t i = 0; i < E; i += 4) {
      const mve_pred16_t m = vctp32q(static_cast<uint32_t>(E - i));
      const int32x4_t d = vqsubq_n_s32(vld1q_z_s32(xr + i, m), mean);
      max_abs = vmaxavq_p_s32(max_abs, d, m);
    }
    const int32_t b = bit_length_u32(max_abs);
    const int32_t k = norm_reduce_shift(b);
    int64_t sq = 0;
    for (int32_t i = 0; i < E; i += 4) {
      const mve_pred16_t m = vctp32q(static_cast<uint32_t>(E - i));
      const int32x4_t d = vrshlq_n_s32(vqsubq_n_s32(vld1q_z_s32(xr + i, m), mean), -k);
      sq = vmlaldavaq_p_s32(sq, d, d, m);
    }
    const int32_t R = norm_multiplier(static_cast<uint64_t>(sq), E, p.eps, b, k);
    const int32_t u_shift = 29 - b;
    Out* yr = y.row(r);
    for (int32_t i = 0; i < E; i += 4) {
      const mve_pred16_t m = vctp32q(static_cast<uint32_t>(E - i));
      const int32x4_t d = vqsubq_n_s32(vld1q_z_s32(xr + i, m), mean);
      const int32x4_t n = vqrdmulhq_n_s32(vrshlq_n_s32(d, u_shift), R);
      int32x4_t acc = vqrdmulhq_s32(n, vld1q_z_s32(p.weight + i, m));
      if (p.bias != nullptr) acc = vaddq_s32(acc, vld1q_z_s32(p.bias + i, m));
      int32x4_t v = vqaddq_n_s32(vqrshlq_n_s32(acc, -p.shift), p.output_zero_point);
      v = vminq_s32(vmaxq_s32(v, vdupq_n_s32(lo)), vdupq_n_s32(hi));
      store(yr + i, v, m);
    }
  }
}

}  // namespace

#if ATTN_WITH_S8
void norm_s8_mve(ConstMatS32 x, NormKind kind, const NormFixed& p, MatS8 y) {
  norm_rows_mve(x, kind, p, y, -128, 127);
}
#endif
#if ATTN_WITH_S16
void norm_s16_mve(ConstMatS32 x, NormKind kind, const NormFixed& p, MatS16 y) {
  norm_rows_mve(x, kind, p, y, -32768, 32767);
}
#endif
void norm_s32_mve(ConstMatS32 x, NormKind kind, const NormFixed& p, MatS32 y) {
  norm_rows_mve(x, kind, p, y, INT32_MIN, INT32_MAX);
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_MVE
