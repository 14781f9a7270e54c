// The fused attention softmax, int32 scores -> Q0.15 probabilities, x86-64
// AVX-512 (F/BW/VL, compiled with the VNNI tier: ATTN_HAVE_AVX512VNNI):
// softmax_fused_row_ref's integer arithmetic (see that file for the
// formulas), bit-exact, 16 keys per step, the key tail by masked loads and
// stores (no scalar loop). Where the AVX2 variant gathers kExp2Table, this
// one looks it up in registers: the 256 uint16 entries are 8 zmm of 32
// words, vpermt2w reads 64 entries by the index's low 6 bits (each index
// sits in the low word of its dword lane; the high words read entry 0 and
// are masked off), and bits 6 and 7 blend the four results.
//   max      _mm512_max_epi32
//   e_j      u = smax - s (uint32); t = high half of (u << exp_shift) *
//            exp_multiplier (_mm512_mul_epu32, even and odd lanes); e = 0
//            where u > diff_limit (unsigned compare); sum in uint32 lanes
//            (ref's sum is a uint32 too: addition mod 2^32 in any order)
//   1 / sum  scalar, as ref
//   p_j      high half of e * recip + 2^31, narrowed to int16 (<= 32767) and
//            stored over bytes [2 j, 2 j + 32): int32 entries [j / 2, j / 2 + 8),
//            all read already (j / 2 + 8 <= j + 16).
#include "internal/arch.h"

#if ATTN_HAVE_AVX512VNNI
#include <immintrin.h>

#include <cstring>

#include "internal/avx512_fixed.h"
#include "internal/exp2_table.h"
#include "internal/fixed_point.h"
#include "internal/kernels_fixed.h"

namespace attn {
namespace detail {
namespace {

// High 32 bits of the 16 unsigned products a * b (+ add, 64-bit, per lane).
inline __m512i mulhi_epu32(__m512i a, __m512i b, __m512i add) {
  const __m512i even = _mm512_srli_epi64(_mm512_add_epi64(_mm512_mul_epu32(a, b), add), 32);
  const __m512i odd =
      _mm512_add_epi64(_mm512_mul_epu32(_mm512_srli_epi64(a, 32), _mm512_srli_epi64(b, 32)), add);
  return _mm512_mask_blend_epi32(0xAAAA, even, odd);
}

struct Table {
  __m512i t[8];  // kExp2Table[32 i .. 32 i + 32) as words
  Table() {
    for (int i = 0; i < 8; ++i) t[i] = _mm512_loadu_si512(kExp2Table + 32 * i);
  }
  // kExp2Table[idx] per dword lane, idx in [0, 255].
  __m512i lookup(__m512i idx) const {
    const __m512i r0 = _mm512_permutex2var_epi16(t[0], idx, t[1]);
    const __m512i r1 = _mm512_permutex2var_epi16(t[2], idx, t[3]);
    const __m512i r2 = _mm512_permutex2var_epi16(t[4], idx, t[5]);
    const __m512i r3 = _mm512_permutex2var_epi16(t[6], idx, t[7]);
    const __mmask32 b6 = _mm512_test_epi16_mask(idx, _mm512_set1_epi16(0x40));
    const __mmask32 b7 = _mm512_test_epi16_mask(idx, _mm512_set1_epi16(0x80));
    const __m512i r =
        _mm512_mask_blend_epi16(b7, _mm512_mask_blend_epi16(b6, r0, r1), _mm512_mask_blend_epi16(b6, r2, r3));
    return _mm512_and_si512(r, _mm512_set1_epi32(0xFFFF));
  }
};

}  // namespace

void softmax_fused_row_avx512(int32_t* row, int32_t begin, int32_t end, int32_t n, const FusedSoftmax& sm) {
  // Output: int16 probabilities [n] over the first 2n bytes of row.
  unsigned char* bytes = reinterpret_cast<unsigned char*>(row);
  if (begin >= end) {
    std::memset(bytes, 0, 2 * static_cast<size_t>(n));
    return;
  }
  const FusedSoftmax c = sm;
  __m512i vmax = _mm512_set1_epi32(row[begin]);
  for (int32_t j = begin; j < end; j += 16) {
    const __mmask16 k = avx512i::mask16(end - j < 16 ? end - j : 16);
    vmax = _mm512_max_epi32(vmax, _mm512_mask_loadu_epi32(vmax, k, row + j));
  }
  const int32_t smax = _mm512_reduce_max_epi32(vmax);

  // Pass 1: e_j in place of s_j, and their sum.
  const Table table;
  const __m512i vsmax = _mm512_set1_epi32(smax);
  const __m512i vlimit = _mm512_set1_epi32(c.diff_limit);
  const __m512i vmult = _mm512_set1_epi32(static_cast<int32_t>(c.exp_multiplier));
  const __m128i vshift = _mm_cvtsi32_si128(c.exp_shift);
  const __m512i idx_mask = _mm512_set1_epi32((1 << kExp2TableBits) - 1);
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i zero = _mm512_setzero_si512();
  __m512i vsum = zero;
  for (int32_t j = begin; j < end; j += 16) {
    const __mmask16 k = avx512i::mask16(end - j < 16 ? end - j : 16);
    int32_t* pj = row + j;  // [16]
    const __m512i u = _mm512_sub_epi32(vsmax, _mm512_maskz_loadu_epi32(k, pj));
    const __mmask16 keep = k & _mm512_cmple_epu32_mask(u, vlimit);
    const __m512i t = mulhi_epu32(_mm512_sll_epi32(u, vshift), vmult, zero);
    const __m512i idx = _mm512_and_si512(_mm512_srli_epi32(t, kExp2FracBits - kExp2TableBits), idx_mask);
    const __m512i x = _mm512_slli_epi32(table.lookup(idx), 1);
    // t >> 16 is in [0, 15] where kept; the other lanes are zeroed.
    const __m512i e = _mm512_maskz_srli_epi32(
        keep, _mm512_add_epi32(_mm512_srlv_epi32(x, _mm512_srli_epi32(t, kExp2FracBits)), one), 1);
    _mm512_mask_storeu_epi32(pj, k, e);
    vsum = _mm512_add_epi32(vsum, e);
  }
  const uint32_t sum = static_cast<uint32_t>(_mm512_reduce_add_epi32(vsum));

  // 1 / sum, as ref.
  const int h = fp::count_leading_zeros(sum);
  const int32_t a = static_cast<int32_t>((sum << h) - (uint32_t{1} << 31));
  const uint32_t r31 = static_cast<uint32_t>(fp::one_over_one_plus_x_for_x_in_0_1(a));
  const int rs = h + kProbBits - 30;
  const uint32_t r = rs >= 0 ? r31 << rs : r31 >> -rs;
  const uint32_t recip = r - (r >> kProbBits);

  // Pass 2: p_j as int16 over the start of the row.
  const __m512i vrecip = _mm512_set1_epi32(static_cast<int32_t>(recip));
  const __m512i round = _mm512_set1_epi64(int64_t{1} << 31);
  for (int32_t j = begin; j < end; j += 16) {
    const __mmask16 k = avx512i::mask16(end - j < 16 ? end - j : 16);
    const __m512i e = _mm512_maskz_loadu_epi32(k, row + j);
    const __m512i p = mulhi_epu32(e, vrecip, round);  // <= 32767
    _mm256_mask_storeu_epi16(bytes + 2 * static_cast<ptrdiff_t>(j), k, _mm512_cvtepi32_epi16(p));
  }
  if (begin > 0) std::memset(bytes, 0, 2 * static_cast<size_t>(begin));
  if (end < n) std::memset(bytes + 2 * static_cast<ptrdiff_t>(end), 0, 2 * static_cast<size_t>(n - end));
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX512VNNI
