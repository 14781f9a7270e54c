// GELU (exact, erf), float32, x86-64 AVX2/FMA, in place, times up when given.
//
// erf by Eigen's rational approximation (generic_fast_erf_float: an odd
// degree-13 numerator over an even degree-8 denominator on x clamped to
// [-4, 4], where erf is +-1 in float): within a few ulp of erf. The
// cancellation in 1 + erf(x) for x << 0 is the ref's too (it computes the
// same formula with std::erf), so the two agree within a few ulp of |x|.
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2
#include "kernels/kernels_f32.h"
#include "kernels/x86/avx2_f32.h"

namespace attn {
namespace detail {
namespace {

inline __m256 erf8(__m256 a) {
  // min(4, a), then max(-4, .): minps/maxps return the second operand when
  // either is NaN, so NaN propagates.
  const __m256 x = _mm256_max_ps(_mm256_set1_ps(-4.0f), _mm256_min_ps(_mm256_set1_ps(4.0f), a));
  const __m256 x2 = _mm256_mul_ps(x, x);
  __m256 p =
      _mm256_fmadd_ps(x2, _mm256_set1_ps(-2.72614225801306e-10f), _mm256_set1_ps(2.77068142495902e-08f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-2.10102402082508e-06f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-5.69250639462346e-05f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-7.34990630326855e-04f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-2.95459980854025e-03f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-1.60960333262415e-02f));
  p = _mm256_mul_ps(x, p);
  __m256 q =
      _mm256_fmadd_ps(x2, _mm256_set1_ps(-1.45660718464996e-05f), _mm256_set1_ps(-2.13374055278905e-04f));
  q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(-1.68282697438203e-03f));
  q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(-7.37332916720468e-03f));
  q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(-1.42647390514189e-02f));
  return _mm256_div_ps(p, q);
}

}  // namespace

void gelu_f32_avx2(float* x, const float* up, int32_t n) {
  avx2::map_times(x, up, n, [](__m256 v) {
    const __m256 e = erf8(_mm256_mul_ps(v, _mm256_set1_ps(0.707106781186547524f)));
    return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), v), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
  });
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
