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
// Tails run predicated (VCTP); the row loop is the ref's (norm_rows,
// kernels/model_fixed_rows.h). y may be x (int32 output, in place): each
// chunk is read before it is written.
#include "kernels/arch.h"

#if ATTN_HAVE_MVE
#include <arm_mve.h>

#include "kernels/model_fixed_rows.h"

namespace attn {
namespace detail {
namespace {

inline void store_p(int8_t* p, int32x4_t v, mve_pred16_t m) { vstrbq_p_s32(p, v, m); }
inline void store_p(int16_t* p, int32x4_t v, mve_pred16_t m) { vstrhq_p_s32(p, v, m); }
inline void store_p(int32_t* p, int32x4_t v, mve_pred16_t m) { vstrwq_p_s32(p, v, m); }

}  // namespace

template <>
struct NormOps<Isa::kMve> {
  static int32_t cols(int32_t E) { return E; }
  static int64_t sum(const int32_t* x, int32_t n) {
    int64_t s = 0;
    for (int32_t i = 0; i < n; i += 4) {
      const mve_pred16_t m = vctp32q(static_cast<uint32_t>(n - i));
      s = vaddlvaq_p_s32(s, vld1q_z_s32(x + i, m), m);
    }
    return s;
  }
  static uint32_t max_abs(const int32_t* x, int32_t n, int32_t mean) {
    uint32_t a = 0;
    for (int32_t i = 0; i < n; i += 4) {
      const mve_pred16_t m = vctp32q(static_cast<uint32_t>(n - i));
      a = vmaxavq_p_s32(a, vqsubq_n_s32(vld1q_z_s32(x + i, m), mean), m);
    }
    return a;
  }
  static uint64_t sum_sq(const int32_t* x, int32_t n, int32_t mean, int32_t k) {
    int64_t sq = 0;
    for (int32_t i = 0; i < n; i += 4) {
      const mve_pred16_t m = vctp32q(static_cast<uint32_t>(n - i));
      const int32x4_t d = vrshlq_n_s32(vqsubq_n_s32(vld1q_z_s32(x + i, m), mean), -k);
      sq = vmlaldavaq_p_s32(sq, d, d, m);
    }
    return static_cast<uint64_t>(sq);
  }
  template <typename Out>
  static void store(const int32_t* x, int32_t n, int32_t mean, int32_t u_shift, int32_t R, const NormFixed& p,
                    int32_t lo, int32_t hi, Out* y) {
    for (int32_t i = 0; i < n; i += 4) {
      const mve_pred16_t m = vctp32q(static_cast<uint32_t>(n - i));
      const int32x4_t d = vqsubq_n_s32(vld1q_z_s32(x + i, m), mean);
      const int32x4_t nq = vqrdmulhq_n_s32(vrshlq_n_s32(d, u_shift), R);
      int32x4_t acc = vqrdmulhq_s32(nq, vld1q_z_s32(p.weight + i, m));
      if (p.bias != nullptr) acc = vaddq_s32(acc, vld1q_z_s32(p.bias + i, m));
      int32x4_t v = vqaddq_n_s32(vqrshlq_n_s32(acc, -p.shift), p.output_zero_point);
      v = vminq_s32(vmaxq_s32(v, vdupq_n_s32(lo)), vdupq_n_s32(hi));
      store_p(y + i, v, m);
    }
  }
};
template struct NormRows<Isa::kMve>;

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_MVE
