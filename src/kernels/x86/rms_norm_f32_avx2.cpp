// RMSNorm over one row, float32, x86-64 AVX2/FMA: the ref's two passes
// (v = x + r and its squares; the scaled output), 8 lanes at a time, the
// tail through masked loads and stores. The bias argument is unused.
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2

#include "kernels/kernels_f32.h"
#include "kernels/x86/avx2_f32.h"

namespace attn {
namespace detail {
void rms_norm_row_f32_avx2(const float* x, const float* r, int32_t n, const float* w, const float* /*b*/,
                           float eps, float* y) {
  const int32_t n8 = n & ~7;
  const __m256i tail = avx2::lanes8(n - n8);
  const __m256 vsq = avx2::residual_sums<true>(x, r, n, y);
  const __m256 vrstd = _mm256_set1_ps(1.0f / avx2::sqrt1(avx2::hsum(vsq) / static_cast<float>(n) + eps));
  for (int32_t j = 0; j < n8; j += 8)
    _mm256_storeu_ps(y + j,
                     _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(y + j), vrstd), _mm256_loadu_ps(w + j)));
  if (n8 < n) {
    const __m256 v = _mm256_mul_ps(_mm256_maskload_ps(y + n8, tail), vrstd);
    _mm256_maskstore_ps(y + n8, tail, _mm256_mul_ps(v, _mm256_maskload_ps(w + n8, tail)));
  }
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
