// GELU, tanh approximation, float32, x86-64 AVX2/FMA, in place, times up
// when given. x/2 (1 + tanh(y)) = x sigmoid(2y), y = sqrt(2/pi) (x + 0.044715 x^3),
// with the sigmoid of kernels/x86/avx2_f32.h (exp of a non-positive argument,
// no overflow): no cancellation for x << 0, where the ref's 1 + tanh(y)
// loses the digits that the two then differ by (a few ulp of |x|).
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2
#include "kernels/kernels_f32.h"
#include "kernels/x86/avx2_f32.h"

namespace attn {
namespace detail {

void gelu_tanh_f32_avx2(float* x, const float* up, int32_t n) {
  avx2::map_times(x, up, n, [](__m256 v) {
    const __m256 v3 = _mm256_mul_ps(_mm256_mul_ps(v, v), v);
    const __m256 y = _mm256_mul_ps(_mm256_set1_ps(0.797884560802865356f),
                                   _mm256_fmadd_ps(_mm256_set1_ps(0.044715f), v3, v));
    return _mm256_mul_ps(v, avx2::sigmoid(_mm256_add_ps(y, y)));
  });
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
