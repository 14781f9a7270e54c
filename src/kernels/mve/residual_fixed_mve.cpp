// residual, the int32 residual stream's rescales, Cortex-M55 Helium (MVE):
// RescaleFixed's 32-bit steps on four lanes, bit-exact with the ref:
// mulhi_round32 is VRMULH, shift_round_sat32(v, s) is VQRSHL by -s (rounding
// right shifts, saturating left ones), the saturating add VQADD; widening
// loads of the activations, narrowing stores after the clamp. Tails
// predicated (VCTP); the row loop is the ref's (kernels/model_fixed_rows.h).
#include "kernels/arch.h"

#if ATTN_HAVE_MVE
#include <arm_mve.h>

#include "kernels/model_fixed_rows.h"

namespace attn {
namespace detail {
namespace {

inline int32x4_t load_z(const int8_t* p, mve_pred16_t m) { return vldrbq_z_s32(p, m); }
inline int32x4_t load_z(const int16_t* p, mve_pred16_t m) { return vldrhq_z_s32(p, m); }
inline void store_p(int8_t* p, int32x4_t v, mve_pred16_t m) { vstrbq_p_s32(p, v, m); }
inline void store_p(int16_t* p, int32x4_t v, mve_pred16_t m) { vstrhq_p_s32(p, v, m); }

}  // namespace

template <>
struct ResidualOps<Isa::kMve> {
  template <typename Act>
  static int32_t to_act(const int32_t* x, const RescaleFixed& r, Act* y, int32_t n, int32_t lo, int32_t hi) {
    const int32x4_t m = vdupq_n_s32(r.multiplier);
    for (int32_t c = 0; c < n; c += 4) {
      const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n - c));
      int32x4_t q =
          vqaddq_n_s32(vqrshlq_n_s32(vrmulhq_s32(vld1q_z_s32(x + c, p), m), r.shift + 1), r.zero_point);
      q = vminq_s32(vmaxq_s32(q, vdupq_n_s32(lo)), vdupq_n_s32(hi));
      store_p(y + c, q, p);
    }
    return n;
  }
  template <typename Act>
  static int32_t add(int32_t* x, const Act* y, int32_t n, const RescaleFixed& r) {
    constexpr int32_t kPre = kResidualAddPreShift<Act>;
    const int32x4_t m = vdupq_n_s32(r.multiplier);
    const int32_t left = r.shift + 1 - kPre;  // VQRSHL amount: -(right shift)
    for (int32_t c = 0; c < n; c += 4) {
      const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n - c));
      const int32x4_t v = vshlq_n_s32(vsubq_n_s32(load_z(y + c, p), r.zero_point), kPre);
      const int32x4_t t = vqrshlq_n_s32(vrmulhq_s32(v, m), left);
      vstrwq_p_s32(x + c, vqaddq_s32(vld1q_z_s32(x + c, p), t), p);
    }
    return n;
  }
};
template struct ResidualRows<Isa::kMve>;

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_MVE
