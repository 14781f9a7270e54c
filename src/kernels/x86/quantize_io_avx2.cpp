// Float <-> integer activations, x86-64 AVX2: the quantize_*_ref /
// dequantize_*_ref arithmetic, bit-exact, 8 values a step.
//   quantize: x / scale in double (4 lanes), round half away from zero as
//     t + (f >= 1/2) - (f <= -1/2) with t = trunc(d), f = d - t (exact for
//     |d| < 2^52; beyond that d is an integer and f = 0; for +-infinity f is
//     NaN and both tests fail), plus the zero point, clamped by two selects
//     (an infinity clamps; NaN passes both and is replaced by the zero point).
//   dequantize: the same float product as ref, 8 lanes.
// `attn run` converts every block's inputs and outputs with these: in a
// build for plain x86-64 they are what keeps the conversions off the profile.
#include "attn/config.h"
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2
#include <immintrin.h>

#include <limits>

#include "kernels/kernels_fixed.h"

namespace attn {
namespace detail {
namespace {

template <class T>
void quantize_avx2(const float* x, size_t n, float scale, int32_t zero_point, T* q) {
  const double lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  const __m256d vs = _mm256_set1_pd(static_cast<double>(scale)), vzp = _mm256_set1_pd(zero_point);
  const __m256d vlo = _mm256_set1_pd(lo), vhi = _mm256_set1_pd(hi), one = _mm256_set1_pd(1.0);
  const __m256d half = _mm256_set1_pd(0.5), mhalf = _mm256_set1_pd(-0.5);
  const auto four = [&](const float* xi) {  // 4 values -> 4 int32 lanes
    const __m256d d = _mm256_div_pd(_mm256_cvtps_pd(_mm_loadu_ps(xi)), vs);
    const __m256d t = _mm256_round_pd(d, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256d f = _mm256_sub_pd(d, t);
    const __m256d up = _mm256_and_pd(_mm256_cmp_pd(f, half, _CMP_GE_OQ), one);
    const __m256d dn = _mm256_and_pd(_mm256_cmp_pd(f, mhalf, _CMP_LE_OQ), one);
    __m256d v = _mm256_add_pd(_mm256_add_pd(t, _mm256_sub_pd(up, dn)), vzp);
    v = _mm256_blendv_pd(v, vlo, _mm256_cmp_pd(v, vlo, _CMP_LT_OQ));
    v = _mm256_blendv_pd(v, vhi, _mm256_cmp_pd(v, vhi, _CMP_GT_OQ));
    v = _mm256_blendv_pd(v, vzp, _mm256_cmp_pd(d, d, _CMP_UNORD_Q));  // NaN: the zero point
    return _mm256_cvttpd_epi32(v);
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i a = four(x + i), b = four(x + i + 4);  // in range: the packs do not saturate
    const __m128i w16 = _mm_packs_epi32(a, b);           // 8 int16
    if (sizeof(T) == 1) {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(q + i), _mm_packs_epi16(w16, w16));  // 8 int8
    } else {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(q + i), w16);
    }
  }
  if (i < n) {  // the tail through a padded copy, the same lanes
    alignas(16) float xt[8] = {};
    alignas(16) T qt[8];
    for (size_t j = 0; i + j < n; ++j) xt[j] = x[i + j];
    const __m128i w16 = _mm_packs_epi32(four(xt), four(xt + 4));
    if (sizeof(T) == 1) {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(qt), _mm_packs_epi16(w16, w16));
    } else {
      _mm_store_si128(reinterpret_cast<__m128i*>(qt), w16);
    }
    for (size_t j = 0; i + j < n; ++j) q[i + j] = qt[j];
  }
}

template <class T>
__m256i widen8(const T* q) {  // 8 values -> 8 int32 lanes
  if (sizeof(T) == 1) return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q)));
  return _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
}

template <class T>
void dequantize_avx2(const T* q, size_t n, float scale, int32_t zero_point, float* y) {
  const __m256 vs = _mm256_set1_ps(scale);
  const __m256i vzp = _mm256_set1_epi32(zero_point);
  const auto eight = [&](const T* qi) {
    return _mm256_mul_ps(vs, _mm256_cvtepi32_ps(_mm256_sub_epi32(widen8(qi), vzp)));
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, eight(q + i));
  if (i < n) {
    T qt[8] = {};
    alignas(32) float yt[8];
    for (size_t j = 0; i + j < n; ++j) qt[j] = q[i + j];
    _mm256_store_ps(yt, eight(qt));
    for (size_t j = 0; i + j < n; ++j) y[i + j] = yt[j];
  }
}

}  // namespace

#if ATTN_WITH_S8
void quantize_s8_avx2(const float* x, size_t n, float scale, int32_t zero_point, int8_t* q) {
  quantize_avx2(x, n, scale, zero_point, q);
}
void dequantize_s8_avx2(const int8_t* q, size_t n, float scale, int32_t zero_point, float* y) {
  dequantize_avx2(q, n, scale, zero_point, y);
}
#endif
#if ATTN_WITH_S16
void quantize_s16_avx2(const float* x, size_t n, float scale, int32_t zero_point, int16_t* q) {
  quantize_avx2(x, n, scale, zero_point, q);
}
void dequantize_s16_avx2(const int16_t* q, size_t n, float scale, int32_t zero_point, float* y) {
  dequantize_avx2(q, n, scale, zero_point, y);
}
#endif

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
