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
// The row loop and the last E % 8 elements are the ref's (norm_rows,
// kernels/model_fixed_rows.h). y may be x (int32 output, in place): each
// element is read before it is written.
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2
#include "kernels/model_fixed_rows.h"
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

}  // namespace

template <>
struct NormOps<Isa::kAvx2> {
  static int32_t cols(int32_t E) { return E & ~7; }
  static int64_t sum(const int32_t* x, int32_t n) {
    __m256i s = _mm256_setzero_si256();
    for (int32_t i = 0; i < n; i += 8) {
      const __m256i v = load(x + i);
      s = _mm256_add_epi64(s, _mm256_cvtepi32_epi64(_mm256_castsi256_si128(v)));
      s = _mm256_add_epi64(s, _mm256_cvtepi32_epi64(_mm256_extracti128_si256(v, 1)));
    }
    return hsum64(s);
  }
  static uint32_t max_abs(const int32_t* x, int32_t n, int32_t mean) {
    const __m256i vmean = _mm256_set1_epi32(mean);
    __m256i vmax = _mm256_setzero_si256();
    for (int32_t i = 0; i < n; i += 8)
      vmax = _mm256_max_epu32(vmax, _mm256_abs_epi32(avx2m::subs(load(x + i), vmean)));
    return hmax_u32(vmax);
  }
  static uint64_t sum_sq(const int32_t* x, int32_t n, int32_t mean, int32_t k) {
    const __m256i vmean = _mm256_set1_epi32(mean);
    __m256i s = _mm256_setzero_si256();
    for (int32_t i = 0; i < n; i += 8) {
      const __m256i d = avx2m::rshift_round(avx2m::subs(load(x + i), vmean), k);
      s = _mm256_add_epi64(s, _mm256_mul_epi32(d, d));
      const __m256i o = _mm256_srli_epi64(d, 32);
      s = _mm256_add_epi64(s, _mm256_mul_epi32(o, o));
    }
    return static_cast<uint64_t>(hsum64(s));
  }
  template <typename Out>
  static void store(const int32_t* x, int32_t n, int32_t mean, int32_t u_shift, int32_t R, const NormFixed& p,
                    int32_t lo, int32_t hi, Out* y) {
    const __m256i vmean = _mm256_set1_epi32(mean), vR = _mm256_set1_epi32(R);
    const __m256i vzp = _mm256_set1_epi32(p.output_zero_point);
    const __m256i vlo = _mm256_set1_epi32(lo), vhi = _mm256_set1_epi32(hi);
    for (int32_t i = 0; i < n; i += 8) {
      const __m256i d = avx2m::subs(load(x + i), vmean);
      const __m256i nq = avx2m::mulhi_round_q31(avx2m::shift_round(d, u_shift), vR);
      __m256i acc = avx2m::mulhi_round_q31(nq, load(p.weight + i));
      if (p.bias != nullptr) acc = _mm256_add_epi32(acc, load(p.bias + i));
      const __m256i v = avx2m::adds(avx2m::shift_round_sat(acc, p.shift), vzp);
      avx2m::store8(y + i, _mm256_min_epi32(_mm256_max_epi32(v, vlo), vhi));
    }
  }
};
template struct NormRows<Isa::kAvx2>;

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_AVX2
