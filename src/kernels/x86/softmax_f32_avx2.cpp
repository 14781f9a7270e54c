// softmax over one row, float32, x86-64 AVX2/FMA, in place.
//
// Three passes as in the ref variant (max; exp and sum; scale), 8 lanes at a
// time, the tail through masked loads that fill absent lanes with -INFINITY
// (their exp is 0, so the sum is unchanged) and masked stores.
//
// exp(x) for x <= 0 (avx2::exp_nonpositive, kernels/x86/avx2_f32.h): x = n ln2 + r with n = round(x / ln2),
// |r|
// <= ln2 / 2; exp(r) by a degree-7 polynomial (the Cephes expf coefficients), times 2^n built in the exponent
// field. Checked on every float in [-87.33, 0]: within 1.26 ulp of the exact exp (std::exp: 0.5 ulp). Below
// ln(FLT_MIN) ~ -87.34 the result is flushed to exactly 0; std::exp would give a subnormal there, less
// than 1.2e-38 after the division by a sum >= 1. -INFINITY (a masked score) therefore gives exactly 0. A NaN
// score makes the row NaN (the ref's NaN policy).
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2
#include <cmath>

#include "kernels/kernels_f32.h"
#include "kernels/x86/avx2_f32.h"

namespace attn {
namespace detail {
namespace {

inline float hmax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

// Lanes [0, n) of row, -INFINITY elsewhere.
inline __m256 load_tail(const float* row, __m256i mask) {
  return _mm256_blendv_ps(_mm256_set1_ps(-INFINITY), _mm256_maskload_ps(row, mask),
                          _mm256_castsi256_ps(mask));
}

}  // namespace

void softmax_row_f32_avx2(float* row, int32_t n) {
  const int32_t n8 = n & ~7;
  const __m256i tail = avx2::lanes8(n - n8);

  // Two accumulators: consecutive vectors do not wait on each other.
  __m256 vmax0 = _mm256_set1_ps(-INFINITY), vmax1 = vmax0;
  int32_t j = 0;
  for (; j + 16 <= n8; j += 16) {
    vmax0 = _mm256_max_ps(vmax0, _mm256_loadu_ps(row + j));
    vmax1 = _mm256_max_ps(vmax1, _mm256_loadu_ps(row + j + 8));
  }
  if (j < n8) vmax0 = _mm256_max_ps(vmax0, _mm256_loadu_ps(row + j));
  if (n8 < n) vmax1 = _mm256_max_ps(vmax1, load_tail(row + n8, tail));
  // maxps does not propagate NaN reliably: max may be NaN, finite or -INFINITY
  // with a NaN in the row. NaN max: every exp is NaN; finite max: the NaN's exp
  // is NaN, so is the sum; -INFINITY: softmax_row_without_max. The row is NaN.
  const float max = hmax(_mm256_max_ps(vmax0, vmax1));
  if (max == -INFINITY) {  // fully masked (or empty): all weights 0; all NaN if a NaN is there
    softmax_row_without_max(row, n);
    return;
  }

  const __m256 vm = _mm256_set1_ps(max);
  // One exp per iteration: the exp's 9 constants and its temporaries fill the
  // 16 registers; a second in flight would spill the sum to the stack.
  __m256 vsum = _mm256_setzero_ps();
  for (j = 0; j < n8; j += 8) {
    const __m256 e = avx2::exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(row + j), vm));
    _mm256_storeu_ps(row + j, e);
    vsum = _mm256_add_ps(vsum, e);
  }
  if (n8 < n) {
    const __m256 e = avx2::exp_nonpositive(_mm256_sub_ps(load_tail(row + n8, tail), vm));
    _mm256_maskstore_ps(row + n8, tail, e);
    vsum = _mm256_add_ps(vsum, e);
  }

  // sum >= 1: the max entry gives exp(0)
  const __m256 inv = _mm256_set1_ps(1.0f / avx2::hsum(vsum));
  for (j = 0; j < n8; j += 8) _mm256_storeu_ps(row + j, _mm256_mul_ps(_mm256_loadu_ps(row + j), inv));
  if (n8 < n) _mm256_maskstore_ps(row + n8, tail, _mm256_mul_ps(_mm256_maskload_ps(row + n8, tail), inv));
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
