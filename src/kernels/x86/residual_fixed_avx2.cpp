// residual, the int32 residual stream's rescales, x86-64 AVX2:
// RescaleFixed's 32-bit steps on 8 lanes, bit-exact with the ref
// (kernels/x86/avx2_model_fixed.h): mulhi_round32 from exact 64-bit products
// (VPMULDQ), shift_round_sat32 as rounding right / saturating left shifts,
// the saturating add written out; widening loads of the activations,
// narrowing stores after the clamp. The last N % 8 elements scalar (the
// ref's steps).
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2
#include "kernels/kernels_model_fixed.h"
#include "kernels/x86/avx2_model_fixed.h"

namespace attn {
namespace detail {
namespace {

template <typename Act>
void add_rows_avx2(MatS32 x, Matrix<const Act> y, const RescaleFixed& r) {
  constexpr int32_t kPre = kResidualAddPreShift<Act>;
  const __m256i m = _mm256_set1_epi32(r.multiplier), zp = _mm256_set1_epi32(r.zero_point);
  const int32_t right = kPre - 1 - r.shift;
  const int32_t N8 = x.cols & ~7;
  for (int32_t i = 0; i < x.rows; ++i) {
    int32_t* xr = x.row(i);
    const Act* yr = y.row(i);
    for (int32_t c = 0; c < N8; c += 8) {
      const __m256i v = _mm256_slli_epi32(_mm256_sub_epi32(avx2m::load8(yr + c), zp), kPre);
      const __m256i t = avx2m::shift_round_sat(avx2m::mulhi_round32(v, m), right);
      __m256i* px = reinterpret_cast<__m256i*>(xr + c);
      _mm256_storeu_si256(px, avx2m::adds(_mm256_loadu_si256(px), t));
    }
    for (int32_t c = N8; c < x.cols; ++c) xr[c] = residual_add_element(xr[c], yr[c], r);
  }
}

template <typename Act>
void to_act_avx2(ConstMatS32 x, const RescaleFixed& r, Matrix<Act> y, int32_t lo, int32_t hi) {
  const __m256i m = _mm256_set1_epi32(r.multiplier), zp = _mm256_set1_epi32(r.zero_point);
  const __m256i vlo = _mm256_set1_epi32(lo), vhi = _mm256_set1_epi32(hi);
  const int32_t right = -1 - r.shift;
  const int32_t N8 = x.cols & ~7;
  for (int32_t i = 0; i < x.rows; ++i) {
    const int32_t* xr = x.row(i);
    Act* yr = y.row(i);
    for (int32_t c = 0; c < N8; c += 8) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xr + c));
      const __m256i q = avx2m::adds(avx2m::shift_round_sat(avx2m::mulhi_round32(v, m), right), zp);
      avx2m::store8(yr + c, _mm256_min_epi32(_mm256_max_epi32(q, vlo), vhi));
    }
    for (int32_t c = N8; c < x.cols; ++c) {
      const int64_t q = residual_to_act_element(xr[c], r);
      yr[c] = static_cast<Act>(q < lo ? lo : q > hi ? hi : q);
    }
  }
}

}  // namespace

#if ATTN_WITH_S8
void residual_add_s8_avx2(MatS32 x, ConstMatS8 y, const RescaleFixed& r) { add_rows_avx2(x, y, r); }
void residual_to_s8_avx2(ConstMatS32 x, const RescaleFixed& r, MatS8 y) { to_act_avx2(x, r, y, -128, 127); }
#endif
#if ATTN_WITH_S16
void residual_add_s16_avx2(MatS32 x, ConstMatS16 y, const RescaleFixed& r) { add_rows_avx2(x, y, r); }
void residual_to_s16_avx2(ConstMatS32 x, const RescaleFixed& r, MatS16 y) {
  to_act_avx2(x, r, y, -32768, 32767);
}
#endif

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_AVX2
