// activation, int8 tables, x86-64 AVX2: act_table_s8_ref and act_gate_s8_ref's
// arithmetic, bit-exact. The plain table: 32 inputs at once, VPSHUFB over
// the table's 16 rows of 16 bytes. The gate: 8 int32 lanes; its 256-entry
// table is copied once per call into int32 entries on the stack
// (sign-extended), so that VPGATHERDD reads 4 whole bytes per lane inside it
// (a gather straight from the int16 table would read past its ends):
//   plain  g = table[h1 + 128]
//   gated  prod = table[h1 + 128] (h3 - zp3)   (|.| < 2^23, int32)
//          g = clamp(zp + round(prod m 2^(sh - 31)))   (64-bit products,
//          ties away from zero: rescale_q31; clamped in 64 bits)
// The last columns (cols % 32 plain, cols % 8 gated) are the ref's.
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2
#include <immintrin.h>

#include "kernels/kernels_model_fixed.h"
#include "kernels/x86/avx2_model_fixed.h"

namespace attn {
namespace detail {
namespace {

// Table entry of each of 8 int8 inputs at p (index input + 128).
inline __m256i lookup8(const int32_t* t32, const int8_t* p) {
  return _mm256_i32gather_epi32(t32, _mm256_add_epi32(avx2m::load8(p), _mm256_set1_epi32(128)), 4);
}

// round(x / 2^e), ties away from zero, per int64 lane (|x| < 2^62; e in
// [1, 62] in the low quadword of `e`, half = 2^(e - 1)).
inline __m256i round_shift64(__m256i x, __m128i e, __m256i half) {
  const __m256i neg = _mm256_cmpgt_epi64(_mm256_setzero_si256(), x);
  const __m256i a = _mm256_sub_epi64(_mm256_xor_si256(x, neg), neg);  // |x|
  const __m256i q = _mm256_srl_epi64(_mm256_add_epi64(a, half), e);
  return _mm256_sub_epi64(_mm256_xor_si256(q, neg), neg);
}

// min(max(v, lo), hi) per int64 lane.
inline __m256i clamp64(__m256i v, __m256i lo, __m256i hi) {
  v = _mm256_blendv_epi8(v, lo, _mm256_cmpgt_epi64(lo, v));
  return _mm256_blendv_epi8(v, hi, _mm256_cmpgt_epi64(v, hi));
}

}  // namespace

void act_table_s8_avx2(MatS8 h1, const int8_t* table) {
  // The table as 16 rows of 16 bytes, each in both 128-bit lanes: VPSHUFB
  // looks up 32 inputs in one row by their low 4 bits, and the row their
  // high 4 bits name is kept (no gather: 32 lookups in 16 steps of 3 instructions).
  __m256i rows[16];
  for (int c = 0; c < 16; ++c) {
    rows[c] = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 16 * c)));
  }
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80)), low4 = _mm256_set1_epi8(0x0F);
  const int32_t n = h1.cols & ~31;
  for (int32_t r = 0; r < h1.rows; ++r) {
    int8_t* row = h1.row(r);
    for (int32_t i = 0; i < n; i += 32) {
      const __m256i idx =
          _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + i)), flip);  // h1 + 128
      const __m256i lo = _mm256_and_si256(idx, low4);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(idx, 4), low4);
      __m256i g = _mm256_setzero_si256();
      for (int c = 0; c < 16; ++c) {
        const __m256i in_row = _mm256_cmpeq_epi8(hi, _mm256_set1_epi8(static_cast<char>(c)));
        g = _mm256_or_si256(g, _mm256_and_si256(in_row, _mm256_shuffle_epi8(rows[c], lo)));
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(row + i), g);
    }
  }
  if (n < h1.cols) act_table_s8_ref(h1.cols_slice(n, h1.cols - n), table);
}

void act_gate_s8_avx2(MatS8 h1, ConstMatS8 h3, const int16_t* table, int32_t h3_zero_point,
                      int32_t multiplier, int32_t shift, int32_t g_zero_point) {
  alignas(32) int32_t t32[256];
  for (int32_t i = 0; i < 256; i += 8) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(t32 + i), avx2m::load8(table + i));
  }
  const int32_t e = 31 - shift;  // [1, 62]
  const __m128i ve = _mm_cvtsi32_si128(e);
  const __m256i half = _mm256_set1_epi64x(int64_t{1} << (e - 1));
  const __m256i vm = _mm256_set1_epi32(multiplier);
  const __m256i zp3 = _mm256_set1_epi32(h3_zero_point);
  const __m256i zp = _mm256_set1_epi64x(g_zero_point);
  const __m256i lo = _mm256_set1_epi64x(-128), hi = _mm256_set1_epi64x(127);
  const int32_t n = h1.cols & ~7;
  for (int32_t r = 0; r < h1.rows; ++r) {
    int8_t* row = h1.row(r);
    const int8_t* up = h3.row(r);
    for (int32_t i = 0; i < n; i += 8) {
      const __m256i prod =
          _mm256_mullo_epi32(lookup8(t32, row + i), _mm256_sub_epi32(avx2m::load8(up + i), zp3));
      const __m256i even = _mm256_mul_epi32(prod, vm);
      const __m256i odd = _mm256_mul_epi32(_mm256_srli_epi64(prod, 32), vm);
      const __m256i ge = clamp64(_mm256_add_epi64(zp, round_shift64(even, ve, half)), lo, hi);
      const __m256i go = clamp64(_mm256_add_epi64(zp, round_shift64(odd, ve, half)), lo, hi);
      avx2m::store8(row + i, avx2m::interleave(ge, _mm256_slli_epi64(go, 32)));
    }
  }
  if (n < h1.cols) {
    act_gate_s8_ref(h1.cols_slice(n, h1.cols - n), h3.cols_slice(n, h1.cols - n), table, h3_zero_point,
                    multiplier, shift, g_zero_point);
  }
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_AVX2
