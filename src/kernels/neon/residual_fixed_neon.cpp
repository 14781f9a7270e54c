// residual, the int32 residual stream's rescales, NEON (AArch64 and ARMv7-A):
// RescaleFixed's 32-bit steps on four lanes, bit-exact with the ref:
// mulhi_round32 is SMULL then a rounding narrowing shift by 32 (RSHRN, exact:
// the result fits int32), shift_round_sat32(v, s) is SQRSHL by -s (rounding
// right shifts, saturating left ones), the saturating add SQADD; widening
// loads of the activations, narrowing stores after the clamp. The row loop
// and the last N % 4 elements are the ref's (kernels/model_fixed_rows.h).
#include "kernels/arch.h"

#if ATTN_HAVE_NEON
#include <arm_neon.h>

#include "kernels/model_fixed_rows.h"

namespace attn {
namespace detail {
namespace {

inline int32x4_t load4(const int8_t* p) {
  int32_t w;
  __builtin_memcpy(&w, p, 4);
  return vmovl_s16(vget_low_s16(vmovl_s8(vreinterpret_s8_s32(vdup_n_s32(w)))));
}
inline int32x4_t load4(const int16_t* p) { return vmovl_s16(vld1_s16(p)); }
inline void store4(int8_t* p, int32x4_t v) {
  const int8x8_t b = vmovn_s16(vcombine_s16(vmovn_s32(v), vdup_n_s16(0)));
  const int32_t w = vget_lane_s32(vreinterpret_s32_s8(b), 0);
  __builtin_memcpy(p, &w, 4);
}
inline void store4(int16_t* p, int32x4_t v) { vst1_s16(p, vmovn_s32(v)); }

// round(a m / 2^32), half up, per lane: mulhi_round32.
inline int32x4_t mulhi_round(int32x4_t a, int32x2_t m) {
  return vcombine_s32(vrshrn_n_s64(vmull_s32(vget_low_s32(a), m), 32),
                      vrshrn_n_s64(vmull_s32(vget_high_s32(a), m), 32));
}

}  // namespace

template <>
struct ResidualOps<Isa::kNeon> {
  template <typename Act>
  static int32_t to_act(const int32_t* x, const RescaleFixed& r, Act* y, int32_t n, int32_t lo, int32_t hi) {
    const int32x4_t left = vdupq_n_s32(r.shift + 1);  // SQRSHL amount: -(right shift)
    const int32x2_t m = vdup_n_s32(r.multiplier);
    const int32x4_t zp = vdupq_n_s32(r.zero_point), vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi);
    const int32_t n4 = n & ~3;
    for (int32_t c = 0; c < n4; c += 4) {
      const int32x4_t q = vqaddq_s32(vqrshlq_s32(mulhi_round(vld1q_s32(x + c), m), left), zp);
      store4(y + c, vminq_s32(vmaxq_s32(q, vlo), vhi));
    }
    return n4;
  }
  template <typename Act>
  static int32_t add(int32_t* x, const Act* y, int32_t n, const RescaleFixed& r) {
    constexpr int32_t kPre = kResidualAddPreShift<Act>;
    const int32x2_t m = vdup_n_s32(r.multiplier);
    const int32x4_t left = vdupq_n_s32(r.shift + 1 - kPre);  // SQRSHL amount: -(right shift)
    const int32x4_t zp = vdupq_n_s32(r.zero_point);
    const int32_t n4 = n & ~3;
    for (int32_t c = 0; c < n4; c += 4) {
      const int32x4_t v = vshlq_n_s32(vsubq_s32(load4(y + c), zp), kPre);
      const int32x4_t t = vqrshlq_s32(mulhi_round(v, m), left);
      vst1q_s32(x + c, vqaddq_s32(vld1q_s32(x + c), t));
    }
    return n4;
  }
};
template struct ResidualRows<Isa::kNeon>;

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_NEON
