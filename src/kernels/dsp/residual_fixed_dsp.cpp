// residual, the int32 residual stream's rescales, Cortex-M DSP extension (M4,
// M7, M33): RescaleFixed's 32-bit steps with SMMULR (= mulhi_round32), QADD
// for the saturating add and SSAT for the clamp; bit-exact with the ref. The
// usual shifts (a rounding right shift of the SMMULR result, |.| < 2^30, so
// adding the half cannot overflow) take the short loop, any other through the
// shared scalar step.
#include "kernels/arch.h"

#if ATTN_HAVE_DSP
#include <arm_acle.h>

#include "kernels/kernels_model_fixed.h"

namespace attn {
namespace detail {
namespace {

inline int32_t smmulr(int32_t a, int32_t b) {
  int32_t r;
  __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
  return r;
}

template <typename Act>
void add_rows_dsp(MatS32 x, Matrix<const Act> y, const RescaleFixed& r) {
  constexpr int32_t kPre = kResidualAddPreShift<Act>;
  const int32_t s = kPre - 1 - r.shift;  // right shift of the product
  const int32_t m = r.multiplier, zp = r.zero_point;
  for (int32_t i = 0; i < x.rows; ++i) {
    int32_t* xr = x.row(i);
    const Act* yr = y.row(i);
    if (s >= 1 && s <= 31) {
      const int32_t half = int32_t{1} << (s - 1);
      for (int32_t c = 0; c < x.cols; ++c) {
        const int32_t t = smmulr((int32_t{yr[c]} - zp) << kPre, m);  // |t| < 2^29
        xr[c] = __qadd(xr[c], (t + half) >> s);
      }
    } else {
      for (int32_t c = 0; c < x.cols; ++c) {
        const int32_t v = (int32_t{yr[c]} - zp) * (int32_t{1} << kPre);
        xr[c] = __qadd(xr[c], rescale_to_residual32(v, m, r.shift, kPre));
      }
    }
  }
}

template <typename Act, int kBits>
void to_act_dsp(ConstMatS32 x, const RescaleFixed& r, Matrix<Act> y) {
  const int32_t s = -1 - r.shift;
  const int32_t m = r.multiplier, zp = r.zero_point;
  for (int32_t i = 0; i < x.rows; ++i) {
    const int32_t* xr = x.row(i);
    Act* yr = y.row(i);
    if (s >= 1) {
      const int32_t half = int32_t{1} << (s - 1);
      for (int32_t c = 0; c < x.cols; ++c) {
        const int32_t t = smmulr(xr[c], m);  // |t| < 2^30
        const int32_t q = ((t + half) >> s) + zp;
        constexpr int32_t hi = (int32_t{1} << (kBits - 1)) - 1;  // SSAT
        yr[c] = static_cast<Act>(q < -hi - 1 ? -hi - 1 : q > hi ? hi : q);
      }
    } else {
      for (int32_t c = 0; c < x.cols; ++c) {
        const int64_t q = int64_t{zp} + rescale_to_act32(xr[c], m, r.shift);
        constexpr int64_t lo = -(int64_t{1} << (kBits - 1)), hi = (int64_t{1} << (kBits - 1)) - 1;
        yr[c] = static_cast<Act>(q < lo ? lo : q > hi ? hi : q);
      }
    }
  }
}

}  // namespace

#if ATTN_WITH_S8
void residual_add_s8_dsp(MatS32 x, ConstMatS8 y, const RescaleFixed& r) { add_rows_dsp(x, y, r); }
void residual_to_s8_dsp(ConstMatS32 x, const RescaleFixed& r, MatS8 y) { to_act_dsp<int8_t, 8>(x, r, y); }
#endif
#if ATTN_WITH_S16
void residual_add_s16_dsp(MatS32 x, ConstMatS16 y, const RescaleFixed& r) { add_rows_dsp(x, y, r); }
void residual_to_s16_dsp(ConstMatS32 x, const RescaleFixed& r, MatS16 y) { to_act_dsp<int16_t, 16>(x, r, y); }
#endif

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_DSP
