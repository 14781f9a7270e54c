// GELU (exact, erf), float32, NEON (AArch64 and ARMv7-A), in place, times up
// when given: the AVX2 variant's algorithm on 4 lanes. erf by Eigen's
// rational approximation (an odd degree-13 numerator over an even degree-8
// denominator on x clamped to [-4, 4], where erf is +-1 in float); FMIN /
// FMAX (VMIN / VMAX) propagate NaN, and NaN times anything stays NaN. The
// quotient: FDIV on AArch64, two Newton steps on ARMv7-A (neon::div).
#include "kernels/arch.h"

#if ATTN_HAVE_NEON
#include "kernels/kernels_f32.h"
#include "kernels/neon/neon_f32.h"

namespace attn {
namespace detail {
namespace {

inline float32x4_t erf4(float32x4_t a) {
  const float32x4_t x = vmaxq_f32(vdupq_n_f32(-4.0f), vminq_f32(vdupq_n_f32(4.0f), a));
  const float32x4_t x2 = vmulq_f32(x, x);
  float32x4_t p = neon::mla(vdupq_n_f32(2.77068142495902e-08f), x2, vdupq_n_f32(-2.72614225801306e-10f));
  p = neon::mla(vdupq_n_f32(-2.10102402082508e-06f), x2, p);
  p = neon::mla(vdupq_n_f32(-5.69250639462346e-05f), x2, p);
  p = neon::mla(vdupq_n_f32(-7.34990630326855e-04f), x2, p);
  p = neon::mla(vdupq_n_f32(-2.95459980854025e-03f), x2, p);
  p = neon::mla(vdupq_n_f32(-1.60960333262415e-02f), x2, p);
  p = vmulq_f32(x, p);
  float32x4_t q = neon::mla(vdupq_n_f32(-2.13374055278905e-04f), x2, vdupq_n_f32(-1.45660718464996e-05f));
  q = neon::mla(vdupq_n_f32(-1.68282697438203e-03f), x2, q);
  q = neon::mla(vdupq_n_f32(-7.37332916720468e-03f), x2, q);
  q = neon::mla(vdupq_n_f32(-1.42647390514189e-02f), x2, q);
  return neon::div(p, q);
}

}  // namespace

void gelu_f32_neon(float* x, const float* up, int32_t n) {
  neon::map_times(x, up, n, [](float32x4_t v) {
    const float32x4_t e = erf4(vmulq_n_f32(v, 0.707106781186547524f));
    return vmulq_f32(vmulq_n_f32(v, 0.5f), vaddq_f32(vdupq_n_f32(1.0f), e));
  });
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_NEON
