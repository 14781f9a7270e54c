// GELU (exact, erf), float32, Cortex-M55 Helium (MVE), in place, times up
// when given: the AVX2 and NEON variants' algorithm on 4 lanes. erf by
// Eigen's rational approximation (an odd degree-13 numerator over an even
// degree-8 denominator on x clamped to [-4, 4], where erf is +-1 in float);
// the denominator is negative, |q| in [0.0142, 2.4]: p / q = -p (1 / -q) with
// mve::recip_positive (no vector divide). The clamp (VMINNM / VMAXNM) drops a
// NaN, but x/2 (1 + erf) is NaN again with x NaN.
#include "kernels/arch.h"

#if ATTN_HAVE_MVE_FP
#include "kernels/kernels_f32.h"
#include "kernels/mve/mve_f32.h"

namespace attn {
namespace detail {
namespace {

inline float32x4_t erf4(float32x4_t a) {
  const float32x4_t x = vmaxnmq_f32(vdupq_n_f32(-4.0f), vminnmq_f32(vdupq_n_f32(4.0f), a));
  const float32x4_t x2 = vmulq_f32(x, x);
  // Horner, p = p * x2 + c (VFMAS with the constant from a core register)
  float32x4_t p = vfmasq_n_f32(vdupq_n_f32(-2.72614225801306e-10f), x2, 2.77068142495902e-08f);
  p = vfmasq_n_f32(p, x2, -2.10102402082508e-06f);
  p = vfmasq_n_f32(p, x2, -5.69250639462346e-05f);
  p = vfmasq_n_f32(p, x2, -7.34990630326855e-04f);
  p = vfmasq_n_f32(p, x2, -2.95459980854025e-03f);
  p = vfmasq_n_f32(p, x2, -1.60960333262415e-02f);
  p = vmulq_f32(x, p);
  float32x4_t q = vfmasq_n_f32(vdupq_n_f32(-1.45660718464996e-05f), x2, -2.13374055278905e-04f);
  q = vfmasq_n_f32(q, x2, -1.68282697438203e-03f);
  q = vfmasq_n_f32(q, x2, -7.37332916720468e-03f);
  q = vfmasq_n_f32(q, x2, -1.42647390514189e-02f);
  return vnegq_f32(vmulq_f32(p, mve::recip_positive(vnegq_f32(q))));
}

}  // namespace

void gelu_f32_mve(float* x, const float* up, int32_t n) {
  mve::map_times(x, up, n, [](float32x4_t v) {
    const float32x4_t e = erf4(vmulq_n_f32(v, 0.707106781186547524f));
    return vmulq_f32(vmulq_n_f32(v, 0.5f), vaddq_n_f32(e, 1.0f));
  });
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_MVE_FP
