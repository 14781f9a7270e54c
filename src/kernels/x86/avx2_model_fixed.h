// kernels/x86/avx2_model_fixed.h: the 32-bit steps of the whole integer models'
// norms and residual rescales (kernels/kernels_model_fixed.h) on 8 int32
// lanes, x86-64 AVX2, bit-exact with the scalar helpers: AVX2 has no
// saturating or rounding 32-bit shifts and no rounding high multiplies
// (NEON's SQRSHL, SQRDMULH; Helium's VQRSHL, VRMULH), so each is written out
// here from exact steps. Include only under ATTN_HAVE_AVX2 (the *_avx2.cpp
// files of src/kernels/norm and src/kernels/residual).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace attn {
namespace detail {
namespace avx2m {

// Lanes of `odd` where the 64-bit halves hold the odd lanes' results in
// their high 32 bits, `even` where the even ones hold them in the low 32.
inline __m256i interleave(__m256i even_lo, __m256i odd_hi) {
  return _mm256_blend_epi32(even_lo, odd_hi, 0xAA);
}

// round(a b / 2^31), half up (mulhi_round_q31): exact 64-bit products
// (VPMULDQ of the even and of the odd lanes) plus 2^30; bits 31..62 are the
// result (|a b| < 2^62 for a > INT32_MIN: the callers').
inline __m256i mulhi_round_q31(__m256i a, __m256i b) {
  const __m256i half = _mm256_set1_epi64x(int64_t{1} << 30);
  const __m256i even = _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(a, b), half), 31);
  const __m256i odd = _mm256_slli_epi64(
      _mm256_srli_epi64(
          _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(b, 32)), half), 31),
      32);
  return interleave(even, odd);
}

// round(a b / 2^32), half up (mulhi_round32), b the same in every lane.
inline __m256i mulhi_round32(__m256i a, __m256i b) {
  const __m256i half = _mm256_set1_epi64x(int64_t{1} << 31);
  const __m256i even = _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(a, b), half), 32);
  const __m256i odd = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), b), half);
  return interleave(even, odd);
}

// round(v / 2^s), half up, s in [0, 31] (rshift_round32).
inline __m256i rshift_round(__m256i v, int32_t s) {
  if (s == 0) return v;
  const __m256i q = _mm256_sra_epi32(v, _mm_cvtsi32_si128(s));
  const __m256i h = _mm256_sra_epi32(v, _mm_cvtsi32_si128(s - 1));
  return _mm256_add_epi32(q, _mm256_and_si256(h, _mm256_set1_epi32(1)));
}

// v * 2^s for s >= 0 (wrapping), round(v / 2^-s) for s < 0 (shift_round32).
inline __m256i shift_round(__m256i v, int32_t s) {
  return s >= 0 ? _mm256_sll_epi32(v, _mm_cvtsi32_si128(s)) : rshift_round(v, -s);
}

// round(v / 2^s) for s >= 1 (0 from s = 32 on), sat32(v * 2^-s) for s in
// [-31, 0] (shift_round_sat32): a left shift saturates where shifting back
// does not give v, to the sign of v.
inline __m256i shift_round_sat(__m256i v, int32_t s) {
  if (s >= 32) return _mm256_setzero_si256();
  if (s > 0) return rshift_round(v, s);
  const __m128i t = _mm_cvtsi32_si128(-s);
  const __m256i l = _mm256_sll_epi32(v, t);
  const __m256i over = _mm256_xor_si256(_mm256_cmpeq_epi32(_mm256_sra_epi32(l, t), v), _mm256_set1_epi32(-1));
  const __m256i sat = _mm256_xor_si256(_mm256_set1_epi32(INT32_MAX), _mm256_srai_epi32(v, 31));
  return _mm256_blendv_epi8(l, sat, over);
}

// sat32(a + b), sat32(a - b): wrapped where the operands' sign allows no overflow.
inline __m256i adds(__m256i a, __m256i b) {
  const __m256i s = _mm256_add_epi32(a, b);
  const __m256i over = _mm256_andnot_si256(_mm256_xor_si256(a, b), _mm256_xor_si256(a, s));  // sign bit
  const __m256i sat = _mm256_xor_si256(_mm256_set1_epi32(INT32_MAX), _mm256_srai_epi32(a, 31));
  return _mm256_castps_si256(
      _mm256_blendv_ps(_mm256_castsi256_ps(s), _mm256_castsi256_ps(sat), _mm256_castsi256_ps(over)));
}
inline __m256i subs(__m256i a, __m256i b) {
  const __m256i s = _mm256_sub_epi32(a, b);
  const __m256i over = _mm256_and_si256(_mm256_xor_si256(a, b), _mm256_xor_si256(a, s));  // sign bit
  const __m256i sat = _mm256_xor_si256(_mm256_set1_epi32(INT32_MAX), _mm256_srai_epi32(a, 31));
  return _mm256_castps_si256(
      _mm256_blendv_ps(_mm256_castsi256_ps(s), _mm256_castsi256_ps(sat), _mm256_castsi256_ps(over)));
}

// Loads of 8 activations as int32, and stores of 8 int32 lanes already
// clamped to the output's range.
inline __m256i load8(const int8_t* p) {
  return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}
inline __m256i load8(const int16_t* p) {
  return _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline void store8(int8_t* p, __m256i v) {
  const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packs_epi16(w, w));
}
inline void store8(int16_t* p, __m256i v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                   _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
}
inline void store8(int32_t* p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }

}  // namespace avx2m
}  // namespace detail
}  // namespace attn
