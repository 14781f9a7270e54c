// LayerNorm over one row, float32, x86-64 AVX2/FMA: the ref's three passes
// (v = x + r and its sum; the centred squares; the scaled output), 8 lanes
// at a time, the tail through masked loads and stores (which read and write
// nothing past the row). Sums in another order than the ref's: within the
// bound of the variant tester (tests/variant_tester.h).
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2

#include "kernels/kernels_f32.h"
#include "kernels/x86/avx2_f32.h"

namespace attn {
namespace detail {
void layer_norm_row_f32_avx2(const float* x, const float* r, int32_t n, const float* w, const float* b,
                             float eps, float* y) {
  const int32_t n8 = n & ~7;
  const __m256i tail = avx2::lanes8(n - n8);
  const float mean = avx2::hsum(avx2::residual_sums<false>(x, r, n, y)) / static_cast<float>(n);
  const __m256 vmean = _mm256_set1_ps(mean);
  __m256 vsq = _mm256_setzero_ps();
  for (int32_t j = 0; j < n8; j += 8) {
    const __m256 d = _mm256_sub_ps(_mm256_loadu_ps(y + j), vmean);
    vsq = _mm256_fmadd_ps(d, d, vsq);
  }
  if (n8 < n) {
    const __m256 d = _mm256_and_ps(_mm256_sub_ps(_mm256_maskload_ps(y + n8, tail), vmean),
                                   _mm256_castsi256_ps(tail));  // absent lanes: 0, not -mean
    vsq = _mm256_fmadd_ps(d, d, vsq);
  }
  const float rstd = 1.0f / avx2::sqrt1(avx2::hsum(vsq) / static_cast<float>(n) + eps);
  const __m256 vrstd = _mm256_set1_ps(rstd);
  for (int32_t j = 0; j < n8; j += 8) {
    const __m256 d = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(y + j), vmean), vrstd);
    const __m256 out = b != nullptr ? _mm256_fmadd_ps(d, _mm256_loadu_ps(w + j), _mm256_loadu_ps(b + j))
                                    : _mm256_mul_ps(d, _mm256_loadu_ps(w + j));
    _mm256_storeu_ps(y + j, out);
  }
  if (n8 < n) {
    const __m256 d = _mm256_mul_ps(_mm256_sub_ps(_mm256_maskload_ps(y + n8, tail), vmean), vrstd);
    const __m256 wv = _mm256_maskload_ps(w + n8, tail);
    const __m256 out =
        b != nullptr ? _mm256_fmadd_ps(d, wv, _mm256_maskload_ps(b + n8, tail)) : _mm256_mul_ps(d, wv);
    _mm256_maskstore_ps(y + n8, tail, out);
  }
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
