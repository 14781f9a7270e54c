// norm, int32 residual rows -> int8 / int16 / int32, NEON (AArch64 and
// ARMv7-A): NormFixed's arithmetic on four int32 lanes, bit-exact with
// norm_*_ref. The per-row steps (mean, the shifts, the 1/sqrt multiplier R)
// are the shared scalar helpers of kernels/kernels_model_fixed.h; the three
// passes over the row are vector, as the Helium variant's:
//   sum           SADALP (pairwise into int64 lanes)
//   max |d|       SQSUB (d = sat32(x - mean)), ABS as unsigned (|INT32_MIN| = 2^31), UMAX
//   sum d'^2      SRSHL by -k (round half up, exact), SMLAL (int64)
//   y             SRSHL by 29 - b (u; left shifts never overflow: |d| < 2^b),
//                 SQRDMULH by R (round(u R / 2^31); no saturation: R >= 0),
//                 SQRDMULH by w_i, ADD bias_i, SQRSHL by -shift (rounding
//                 right / saturating left, as shift_round_sat32), SQADD zp,
//                 clamp, narrowing store.
// The row loop and the last E % 4 elements are the ref's (norm_rows,
// kernels/model_fixed_rows.h). y may be x (int32 output, in place): each
// element is read before it is written.
#include "kernels/arch.h"

#if ATTN_HAVE_NEON
#include <arm_neon.h>

#include "kernels/model_fixed_rows.h"

namespace attn {
namespace detail {
namespace {

inline void store4(int8_t* p, int32x4_t v) {
  const int8x8_t b = vmovn_s16(vcombine_s16(vmovn_s32(v), vdup_n_s16(0)));
  const int32_t w = vget_lane_s32(vreinterpret_s32_s8(b), 0);
  __builtin_memcpy(p, &w, 4);
}
inline void store4(int16_t* p, int32x4_t v) { vst1_s16(p, vmovn_s32(v)); }
inline void store4(int32_t* p, int32x4_t v) { vst1q_s32(p, v); }

inline uint32_t hmax(uint32x4_t v) {
#if defined(__aarch64__)
  return vmaxvq_u32(v);
#else
  const uint32x2_t m = vpmax_u32(vget_low_u32(v), vget_high_u32(v));
  return vget_lane_u32(vpmax_u32(m, m), 0);
#endif
}
inline int64_t hsum(int64x2_t v) { return vgetq_lane_s64(v, 0) + vgetq_lane_s64(v, 1); }

}  // namespace

template <>
struct NormOps<Isa::kNeon> {
  static int32_t cols(int32_t E) { return E & ~3; }
  static int64_t sum(const int32_t* x, int32_t n) {
    int64x2_t s = vdupq_n_s64(0);
    for (int32_t i = 0; i < n; i += 4) s = vpadalq_s32(s, vld1q_s32(x + i));
    return hsum(s);
  }
  static uint32_t max_abs(const int32_t* x, int32_t n, int32_t mean) {
    const int32x4_t vmean = vdupq_n_s32(mean);
    uint32x4_t vmax = vdupq_n_u32(0);
    for (int32_t i = 0; i < n; i += 4)
      vmax = vmaxq_u32(vmax, vreinterpretq_u32_s32(vabsq_s32(vqsubq_s32(vld1q_s32(x + i), vmean))));
    return hmax(vmax);
  }
  static uint64_t sum_sq(const int32_t* x, int32_t n, int32_t mean, int32_t k) {
    const int32x4_t vmean = vdupq_n_s32(mean), vnk = vdupq_n_s32(-k);
    int64x2_t s0 = vdupq_n_s64(0), s1 = s0;
    for (int32_t i = 0; i < n; i += 4) {
      const int32x4_t d = vrshlq_s32(vqsubq_s32(vld1q_s32(x + i), vmean), vnk);
      s0 = vmlal_s32(s0, vget_low_s32(d), vget_low_s32(d));
      s1 = vmlal_s32(s1, vget_high_s32(d), vget_high_s32(d));
    }
    return static_cast<uint64_t>(hsum(vaddq_s64(s0, s1)));
  }
  template <typename Out>
  static void store(const int32_t* x, int32_t n, int32_t mean, int32_t u_shift, int32_t R, const NormFixed& p,
                    int32_t lo, int32_t hi, Out* y) {
    const int32x4_t vmean = vdupq_n_s32(mean), vu = vdupq_n_s32(u_shift), vsh = vdupq_n_s32(-p.shift);
    const int32x4_t vzp = vdupq_n_s32(p.output_zero_point), vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi);
    for (int32_t i = 0; i < n; i += 4) {
      const int32x4_t d = vqsubq_s32(vld1q_s32(x + i), vmean);
      const int32x4_t nq = vqrdmulhq_n_s32(vrshlq_s32(d, vu), R);
      int32x4_t acc = vqrdmulhq_s32(nq, vld1q_s32(p.weight + i));
      if (p.bias != nullptr) acc = vaddq_s32(acc, vld1q_s32(p.bias + i));
      const int32x4_t v = vqaddq_s32(vqrshlq_s32(acc, vsh), vzp);
      store4(y + i, vminq_s32(vmaxq_s32(v, vlo), vhi));
    }
  }
};
template struct NormRows<Isa::kNeon>;

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_NEON
