// residual, the int32 residual stream's rescales, x86-64 AVX2:
// RescaleFixed's 32-bit steps on 8 lanes, bit-exact with the ref
// (kernels/x86/avx2_model_fixed.h): mulhi_round32 from exact 64-bit products
// (VPMULDQ), shift_round_sat32 as rounding right / saturating left shifts,
// the saturating add written out; widening loads of the activations,
// narrowing stores after the clamp. The row loop and the last N % 8
// elements are the ref's (kernels/model_fixed_rows.h).
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2
#include "kernels/model_fixed_rows.h"
#include "kernels/x86/avx2_model_fixed.h"

namespace attn {
namespace detail {
template <>
struct ResidualOps<Isa::kAvx2> {
  template <typename Act>
  static int32_t to_act(const int32_t* x, const RescaleFixed& r, Act* y, int32_t n, int32_t lo, int32_t hi) {
    const __m256i m = _mm256_set1_epi32(r.multiplier), zp = _mm256_set1_epi32(r.zero_point);
    const __m256i vlo = _mm256_set1_epi32(lo), vhi = _mm256_set1_epi32(hi);
    const int32_t right = -1 - r.shift, n8 = n & ~7;
    for (int32_t c = 0; c < n8; c += 8) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + c));
      const __m256i q = avx2m::adds(avx2m::shift_round_sat(avx2m::mulhi_round32(v, m), right), zp);
      avx2m::store8(y + c, _mm256_min_epi32(_mm256_max_epi32(q, vlo), vhi));
    }
    return n8;
  }
  template <typename Act>
  static int32_t add(int32_t* x, const Act* y, int32_t n, const RescaleFixed& r) {
    constexpr int32_t kPre = kResidualAddPreShift<Act>;
    const __m256i m = _mm256_set1_epi32(r.multiplier), zp = _mm256_set1_epi32(r.zero_point);
    const int32_t right = kPre - 1 - r.shift, n8 = n & ~7;
    for (int32_t c = 0; c < n8; c += 8) {
      const __m256i v = _mm256_slli_epi32(_mm256_sub_epi32(avx2m::load8(y + c), zp), kPre);
      const __m256i t = avx2m::shift_round_sat(avx2m::mulhi_round32(v, m), right);
      __m256i* px = reinterpret_cast<__m256i*>(x + c);
      _mm256_storeu_si256(px, avx2m::adds(_mm256_loadu_si256(px), t));
    }
    return n8;
  }
};
template struct ResidualRows<Isa::kAvx2>;

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_AVX2
