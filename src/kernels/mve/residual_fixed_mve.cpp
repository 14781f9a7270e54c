// residual, the int32 residual stream's rescales, Cortex-M55 Helium (MVE):
// RescaleFixed's 32-bit steps on four lanes, bit-exact with the ref:
// mulhi_round32 is VRMULH, shift_round_sat32(v, s) is VQRSHL by -s (rounding
// right shifts, saturating left ones), the saturating add VQADD; widening
// loads of the activations, narrowing stores after the clamp. Tails
// predicated (VCTP).
#include "kernels/arch.h"

#if ATTN_HAVE_MVE
#include <arm_mve.h>

#include "kernels/kernels_model_fixed.h"

namespace attn {
namespace detail {
namespace {

inline int32x4_t load_z(const int8_t* p, mve_pred16_t m) { return vldrbq_z_s32(p, m); }
inline int32x4_t load_z(const int16_t* p, mve_pred16_t m) { return vldrhq_z_s32(p, m); }
inline void store_p(int8_t* p, int32x4_t v, mve_pred16_t m) { vstrbq_p_s32(p, v, m); }
inline void store_p(int16_t* p, int32x4_t v, mve_pred16_t m) { vstrhq_p_s32(p, v, m); }

template <typename Act>
void add_rows_mve(MatS32 x, Matrix<const Act> y, const RescaleFixed& r) {
  constexpr int32_t kPre = kResidualAddPreShift<Act>;
  const int32x4_t m = vdupq_n_s32(r.multiplier);
  const int32_t left = r.shift + 1 - kPre;  // VQRSHL amount: -(right shift)
  for (int32_t i = 0; i < x.rows; ++i) {
    int32_t* xr = x.row(i);
    const Act* yr = y.row(i);
    for (int32_t c = 0; c < x.cols; c += 4) {
      const mve_pred16_t p = vctp32q(static_cast<uint32_t>(x.cols - c));
      const int32x4_t v = vshlq_n_s32(vsubq_n_s32(load_z(yr + c, p), r.zero_point), kPre);
      const int32x4_t t = vqrshlq_n_s32(vrmulhq_s32(v, m), left);
      vstrwq_p_s32(xr + c, vqaddq_s32(vld1q_z_s32(xr + c, p), t), p);
    }
  }
}

template <typename Act>
void to_act_mve(ConstMatS32 x, const RescaleFixed& r, Matrix<Act> y, int32_t lo, int32_t hi) {
  const int32x4_t m = vdupq_n_s32(r.multiplier);
  const int32_t left = r.shift + 1;
  for (int32_t i = 0; i < x.rows; ++i) {
    const int32_t* xr = x.row(i);
    Act* yr = y.row(i);
    for (int32_t c = 0; c < x.cols; c += 4) {
      const mve_pred16_t p = vctp32q(static_cast<uint32_t>(x.cols - c));
      int32x4_t q = vqaddq_n_s32(vqrshlq_n_s32(vrmulhq_s32(vld1q_z_s32(xr + c, p), m), left), r.zero_point);
      q = vminq_s32(vmaxq_s32(q, vdupq_n_s32(lo)), vdupq_n_s32(hi));
      store_p(yr + c, q, p);
    }
  }
}

}  // namespace

#if ATTN_WITH_S8
void residual_add_s8_mve(MatS32 x, ConstMatS8 y, const RescaleFixed& r) { add_rows_mve(x, y, r); }
void residual_to_s8_mve(ConstMatS32 x, const RescaleFixed& r, MatS8 y) { to_act_mve(x, r, y, -128, 127); }
#endif
#if ATTN_WITH_S16
void residual_add_s16_mve(MatS32 x, ConstMatS16 y, const RescaleFixed& r) { add_rows_mve(x, y, r); }
void residual_to_s16_mve(ConstMatS32 x, const RescaleFixed& r, MatS16 y) {
  to_act_mve(x, r, y, -32768, 32767);
}
#endif

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_MVE
