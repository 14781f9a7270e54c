// norm, int32 residual rows -> int8 / int16 / int32, x86-64 AVX2:
// NormFixed's arithmetic on 8 int32 lanes, bit-exact with norm_*_ref. The
// per-row steps (mean, the shifts, the 1/sqrt multiplier R) are the shared
// scalar helpers of kernels/kernels_model_fixed.h; the three passes over
// the row are vector, each 32-bit step written out exactly
// (kernels/x86/avx2_model_fixed.h):
//   sum           int32 lanes widened to int64 and added
//   max |d|       d = sat32(x - mean), VPABSD read as unsigned (|INT32_MIN| = 2^31), VPMAXUD
//   sum d'^2      d' = round(d / 2^k) (|d'| < 2^24), VPMULDQ squares added in int64
//   y             u = d 2^(29 - b), n = round(u R / 2^31), round(n w_i / 2^31)
//                 (64-bit products), + bias_i, shift_round_sat32 by shift,
//                 saturating + zp, clamp, narrowing store.
// The last E % 8 elements scalar (the ref's steps). y may be x (int32
// output, in place): each element is read before it is written.
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2
#include "kernels/kernels_model_fixed.h"
#include "kernels/x86/avx2_model_fixed.h"

namespace attn {
namespace detail {
namespace {

inline __m256i load(const int32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline int64_t hsum64(__m256i v) {
  const __m128i s = _mm_add_epi64(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  return _mm_cvtsi128_si64(s) + _mm_extract_epi64(s, 1);
}
inline uint32_t hmax_u32(__m256i v) {
  __m128i m = _mm_max_epu32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  m = _mm_max_epu32(m, _mm_shuffle_epi32(m, 0x4E));
  m = _mm_max_epu32(m, _mm_shuffle_epi32(m, 0xB1));
  return static_cast<uint32_t>(_mm_cvtsi128_si32(m));
}

template <typename Out>
void norm_rows_avx2(ConstMatS32 x, NormKind kind, const NormFixed& p, Matrix<Out> y, int32_t lo, int32_t hi) {
  const int32_t E = x.cols, E8 = E & ~7;
  for (int32_t r = 0; r < x.rows; ++r) {
    const int32_t* xr = x.row(r);
    int32_t mean = 0;
    if (kind == NormKind::kLayerNorm) {
      __m256i s = _mm256_setzero_si256();
      for (int32_t i = 0; i < E8; i += 8) {
        const __m256i v = load(xr + i);
        s = _mm256_add_epi64(s, _mm256_cvtepi32_epi64(_mm256_castsi256_si128(v)));
        s = _mm256_add_epi64(s, _mm256_cvtepi32_epi64(_mm256_extracti128_si256(v, 1)));
      }
      mean = norm_mean(norm_sum_from(xr, E8, E, hsum64(s)), E);
    }
    const __m256i vmean = _mm256_set1_epi32(mean);
    __m256i vmax = _mm256_setzero_si256();
    for (int32_t i = 0; i < E8; i += 8)
      vmax = _mm256_max_epu32(vmax, _mm256_abs_epi32(avx2m::subs(load(xr + i), vmean)));
    const uint32_t max_abs = norm_max_abs_from(xr, E8, E, mean, hmax_u32(vmax));
    const int32_t b = bit_length_u32(max_abs);
    const int32_t k = norm_reduce_shift(b);
    __m256i s = _mm256_setzero_si256();
    for (int32_t i = 0; i < E8; i += 8) {
      const __m256i d = avx2m::rshift_round(avx2m::subs(load(xr + i), vmean), k);
      s = _mm256_add_epi64(s, _mm256_mul_epi32(d, d));
      const __m256i o = _mm256_srli_epi64(d, 32);
      s = _mm256_add_epi64(s, _mm256_mul_epi32(o, o));
    }
    const uint64_t sq = norm_sq_from(xr, E8, E, mean, k, static_cast<uint64_t>(hsum64(s)));
    const int32_t R = norm_multiplier(sq, E, p.eps, b, k);
    const int32_t u_shift = 29 - b;
    const __m256i vR = _mm256_set1_epi32(R), vzp = _mm256_set1_epi32(p.output_zero_point);
    const __m256i vlo = _mm256_set1_epi32(lo), vhi = _mm256_set1_epi32(hi);
    Out* yr = y.row(r);
    for (int32_t i = 0; i < E8; i += 8) {
      const __m256i d = avx2m::subs(load(xr + i), vmean);
      const __m256i n = avx2m::mulhi_round_q31(avx2m::shift_round(d, u_shift), vR);
      __m256i acc = avx2m::mulhi_round_q31(n, load(p.weight + i));
      if (p.bias != nullptr) acc = _mm256_add_epi32(acc, load(p.bias + i));
      const __m256i v = avx2m::adds(avx2m::shift_round_sat(acc, p.shift), vzp);
      avx2m::store8(yr + i, _mm256_min_epi32(_mm256_max_epi32(v, vlo), vhi));
    }
    norm_store_from(xr, E8, E, mean, u_shift, R, p, lo, hi, yr);
  }
}

}  // namespace

#if ATTN_WITH_S8
void norm_s8_avx2(ConstMatS32 x, NormKind kind, const NormFixed& p, MatS8 y) {
  norm_rows_avx2(x, kind, p, y, -128, 127);
}
#endif
#if ATTN_WITH_S16
void norm_s16_avx2(ConstMatS32 x, NormKind kind, const NormFixed& p, MatS16 y) {
  norm_rows_avx2(x, kind, p, y, -32768, 32767);
}
#endif
void norm_s32_avx2(ConstMatS32 x, NormKind kind, const NormFixed& p, MatS32 y) {
  norm_rows_avx2(x, kind, p, y, INT32_MIN, INT32_MAX);
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_AVX2
