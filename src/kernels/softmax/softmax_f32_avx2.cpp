// softmax over one row, float32, x86-64 AVX2/FMA, in place.
//
// Three passes as in the ref variant (max; exp and sum; scale), 8 lanes at a
// time, the tail through masked loads that fill absent lanes with -INFINITY
// (their exp is 0, so the sum is unchanged) and masked stores.
//
// exp(x) for x <= 0: x = n ln2 + r with n = round(x / ln2), |r| <= ln2 / 2;
// exp(r) by a degree-7 polynomial (the Cephes expf coefficients), times 2^n
// built in the exponent field. Checked on every float in [-87.33, 0]: within
// 1.26 ulp of the exact exp (std::exp: 0.5 ulp). Below ln(FLT_MIN) ~ -87.34
// the result is flushed to exactly 0; std::exp would give a subnormal there,
// less than 1.2e-38 after the division by a sum >= 1. -INFINITY (a masked
// score) therefore gives exactly 0. A NaN score makes the row NaN (the ref's
// NaN policy).
#include "internal/arch.h"

#if ATTN_HAVE_AVX2
#include <cmath>

#include "internal/avx2_f32.h"
#include "internal/kernels_f32.h"

namespace attn {
namespace detail {
namespace {

// exp of 8 lanes, each <= 0 or -INFINITY; NaN stays NaN.
inline __m256 exp_nonpositive(__m256 x) {
  const __m256 kMin = _mm256_set1_ps(-87.336544f);              // ln(FLT_MIN): 2^n stays a normal float
  const __m256 underflow = _mm256_cmp_ps(x, kMin, _CMP_LT_OQ);  // false for NaN
  x = _mm256_max_ps(kMin, x);  // maxps returns its second operand when either is NaN: NaN propagates
  // n = round(x * log2(e)) by the 1.5 * 2^23 trick: adding it leaves n + 127
  // (the biased exponent of 2^n, in [1, 127]) in the low mantissa bits of t.
  const __m256 kShift = _mm256_set1_ps(12582912.0f + 127.0f);
  const __m256 t = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), kShift);
  const __m256 n = _mm256_sub_ps(t, kShift);
  // r = x - n * ln2, ln2 split in two so that n * ln2_hi is exact.
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  // exp(r) = 1 + r + r^2 * P(r)
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  const __m256 r2 = _mm256_mul_ps(r, r);
  p = _mm256_fmadd_ps(p, r2, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  // times 2^n: move n + 127 into the exponent field.
  p = _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(t), 23)));
  return _mm256_andnot_ps(underflow, p);
}

inline float hmax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
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
    const __m256 e = exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(row + j), vm));
    _mm256_storeu_ps(row + j, e);
    vsum = _mm256_add_ps(vsum, e);
  }
  if (n8 < n) {
    const __m256 e = exp_nonpositive(_mm256_sub_ps(load_tail(row + n8, tail), vm));
    _mm256_maskstore_ps(row + n8, tail, e);
    vsum = _mm256_add_ps(vsum, e);
  }

  // sum >= 1: the max entry gives exp(0)
  const __m256 inv = _mm256_set1_ps(1.0f / hsum(vsum));
  for (j = 0; j < n8; j += 8) _mm256_storeu_ps(row + j, _mm256_mul_ps(_mm256_loadu_ps(row + j), inv));
  if (n8 < n) _mm256_maskstore_ps(row + n8, tail, _mm256_mul_ps(_mm256_maskload_ps(row + n8, tail), inv));
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
