// The fused attention softmax, int32 scores -> Q0.15 probabilities, x86-64
// AVX-512 (F/BW/VL, compiled with the VNNI tier: ATTN_HAVE_AVX512VNNI):
// softmax_fused_row_ref's integer arithmetic (see that file for the
// formulas), bit-exact, 16 keys per step, the key tail by masked loads and
// stores (no scalar loop); two rows of at most 16 keys share one step. Where the AVX2 variant gathers
// kExp2Table, this one looks it up in registers: the 256 uint16 entries are 8 zmm of 32 words, vpermt2w reads
// 64 entries by the index's low 6 bits (each index sits in the low word of its dword lane; the high words
// read entry 0 and are masked off), and bits 6 and 7 blend the four results.
//   max      _mm512_max_epi32
//   e_j      u = smax - s (uint32); t = u * step mod 2^32 (_mm512_mullo_epi32),
//            the entry shifted right by the octave t >> 28; e = 0
//            where u > diff_limit (unsigned compare); sum in uint32 lanes
//            (ref's sum is a uint32 too: addition mod 2^32 in any order)
//   1 / sum  scalar, as ref
//   p_j      high half of e * recip + 2^31, narrowed to int16 (<= 32767) and
//            stored over bytes [2 j, 2 j + 32): int32 entries [j / 2, j / 2 + 8),
//            all read already (j / 2 + 8 <= j + 16).
#include "kernels/arch.h"

#if ATTN_HAVE_AVX512VNNI
#include <immintrin.h>

#include <climits>
#include <cstring>

#include "kernels/exp2_table.h"
#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"
#include "kernels/x86/avx512_fixed.h"

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
  // kExp2Table[idx] per word lane, idx in [0, 255]: 32 lookups at once.
  __m512i lookup32(__m512i idx, __m512i b6bit, __m512i b7bit) const {
    const __m512i r0 = _mm512_permutex2var_epi16(t[0], idx, t[1]);
    const __m512i r1 = _mm512_permutex2var_epi16(t[2], idx, t[3]);
    const __m512i r2 = _mm512_permutex2var_epi16(t[4], idx, t[5]);
    const __m512i r3 = _mm512_permutex2var_epi16(t[6], idx, t[7]);
    const __mmask32 b6 = _mm512_test_epi16_mask(idx, b6bit);
    const __mmask32 b7 = _mm512_test_epi16_mask(idx, b7bit);
    return _mm512_mask_blend_epi16(b7, _mm512_mask_blend_epi16(b6, r0, r1),
                                   _mm512_mask_blend_epi16(b6, r2, r3));
  }
};

// The 16 exps of keys [j, j + 16) whose phase t is given, x = 2 * table value:
// ((x >> (t >> 28)) + 1) >> 1, the lanes past the limit zeroed.
inline __m512i exps16(__m512i x, __m512i t, __mmask16 keep, __m512i one) {
  return _mm512_maskz_srli_epi32(
      keep, _mm512_add_epi32(_mm512_srlv_epi32(x, _mm512_srli_epi32(t, kExpPhaseOctaveShift)), one), 1);
}

// The exps' constants, as lanes.
struct ExpConsts {
  Table table;
  __m512i vlimit, vstep, idx_mask, one, zero, b6bit, b7bit, pack_even;
  explicit ExpConsts(const FusedSoftmax& c)
      : vlimit(_mm512_set1_epi32(fused_exp_constants(c).limit)),
        vstep(_mm512_set1_epi32(static_cast<int32_t>(fused_exp_constants(c).step))),
        idx_mask(_mm512_set1_epi32((1 << kExp2TableBits) - 1)),
        one(_mm512_set1_epi32(1)),
        zero(_mm512_setzero_si512()),
        b6bit(_mm512_set1_epi16(0x40)),
        b7bit(_mm512_set1_epi16(0x80)),
        pack_even(_mm512_set_epi16(62, 60, 58, 56, 54, 52, 50, 48, 46, 44, 42, 40, 38, 36, 34, 32, 30, 28, 26,
                                   24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0)) {}
};

// max_j s_j over [begin, end) (non-empty).
inline int32_t row_max(const int32_t* row, int32_t begin, int32_t end) {
  __m512i vmax = _mm512_set1_epi32(row[begin]);
  for (int32_t j = begin; j < end; j += 16) {
    const __mmask16 k = avx512i::mask16(end - j < 16 ? end - j : 16);
    vmax = _mm512_max_epi32(vmax, _mm512_mask_loadu_epi32(vmax, k, row + j));
  }
  return _mm512_reduce_max_epi32(vmax);
}

// The exps of two vectors of 16 keys, p0 (lanes k0, row maximum m0) and p1
// (lanes k1, maximum m1), in place, added to sum0 and sum1: their table
// indices packed into the words of one vector (the low word of each dword
// lane), one lookup. p1 continues p0's row (p0 + 16), or is another row's
// keys (two short rows at once).
inline void exps32(int32_t* p0, __mmask16 k0, __m512i m0, int32_t* p1, __mmask16 k1, __m512i m1,
                   const ExpConsts& c, __m512i& sum0, __m512i& sum1) {
  const __m512i u0 = _mm512_sub_epi32(m0, _mm512_maskz_loadu_epi32(k0, p0));
  const __m512i u1 = _mm512_sub_epi32(m1, _mm512_maskz_loadu_epi32(k1, p1));
  const __mmask16 keep0 = k0 & _mm512_cmple_epu32_mask(u0, c.vlimit);
  const __mmask16 keep1 = k1 & _mm512_cmple_epu32_mask(u1, c.vlimit);
  const __m512i t0 = _mm512_mullo_epi32(u0, c.vstep);  // mod 2^32, as ref
  const __m512i t1 = _mm512_mullo_epi32(u1, c.vstep);
  const __m512i idx0 = _mm512_and_si512(_mm512_srli_epi32(t0, kExpPhaseIndexShift), c.idx_mask);
  const __m512i idx1 = _mm512_and_si512(_mm512_srli_epi32(t1, kExpPhaseIndexShift), c.idx_mask);
  const __m512i tv = c.table.lookup32(_mm512_permutex2var_epi16(idx0, c.pack_even, idx1), c.b6bit, c.b7bit);
  const __m512i x0 = _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(tv)), 1);
  const __m512i x1 = _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(tv, 1)), 1);
  const __m512i e0 = exps16(x0, t0, keep0, c.one);
  const __m512i e1 = exps16(x1, t1, keep1, c.one);
  _mm512_mask_storeu_epi32(p0, k0, e0);
  _mm512_mask_storeu_epi32(p1, k1, e1);
  sum0 = _mm512_add_epi32(sum0, e0);
  sum1 = _mm512_add_epi32(sum1, e1);
}

// Pass 1: e_j in place of s_j over [begin, end), and their sum (uint32 lanes).
inline __m512i row_exps(int32_t* row, int32_t begin, int32_t end, int32_t smax, const ExpConsts& c) {
  const __m512i vsmax = _mm512_set1_epi32(smax);
  __m512i vsum = c.zero;
  for (int32_t j = begin; j < end; j += 32) {  // two vectors of 16 keys per step
    const int32_t left = end - j;
    const __mmask16 k0 = avx512i::mask16(left < 16 ? left : 16);
    const __mmask16 k1 = avx512i::mask16(left < 16 ? 0 : (left < 32 ? left - 16 : 16));
    exps32(row + j, k0, vsmax, row + j + 16, k1, vsmax, c, vsum, vsum);
  }
  return vsum;
}

// fp::saturating_rounding_doubling_high_mul on 8 int64 lanes holding int32
// values (sign-extended), exactly: the product and its nudge in 64 bits,
// the division by 2^31 truncating toward zero.
inline __m512i srdhm64(__m512i a, __m512i b) {
  const __m512i zero = _mm512_setzero_si512();
  const __m512i ab = _mm512_mul_epi32(a, b);
  const __mmask8 neg = _mm512_cmplt_epi64_mask(ab, zero);
  const __m512i nudge = _mm512_mask_blend_epi64(neg, _mm512_set1_epi64(int64_t{1} << 30),
                                                _mm512_set1_epi64(1 - (int64_t{1} << 30)));
  __m512i n = _mm512_add_epi64(ab, nudge);
  // n / 2^31 toward zero: negative n gets 2^31 - 1 added before the shift
  n = _mm512_mask_add_epi64(n, _mm512_cmplt_epi64_mask(n, zero), n,
                            _mm512_set1_epi64((int64_t{1} << 31) - 1));
  const __m512i q = _mm512_srai_epi64(n, 31);
  const __m512i min32 = _mm512_set1_epi64(INT32_MIN);
  const __mmask8 both_min = _mm512_cmpeq_epi64_mask(a, min32) & _mm512_cmpeq_epi64_mask(b, min32);
  return _mm512_mask_mov_epi64(q, both_min, _mm512_set1_epi64(INT32_MAX));
}
// fp::wrap_add on int64 lanes holding int32 values: the sum's low 32 bits, sign-extended.
inline __m512i wrap_add64(__m512i a, __m512i b) {
  return _mm512_srai_epi64(_mm512_slli_epi64(_mm512_add_epi64(a, b), 32), 32);
}
// fp::saturating_shift_left by e (1 or 2): x << e clamped to int32.
inline __m512i sat_shl64(__m512i x, int e) {
  const __m512i v = _mm512_slli_epi64(x, static_cast<unsigned>(e));
  return _mm512_min_epi64(_mm512_max_epi64(v, _mm512_set1_epi64(INT32_MIN)), _mm512_set1_epi64(INT32_MAX));
}

// The Newton-Raphson steps of fp::one_over_one_plus_x_for_x_in_0_1 on 8
// int64 lanes a = (sum << h) - 2^31, and the doubling after them.
inline __m512i newton8(__m512i va) {
  // rounding_half_sum(a, INT32_MAX) = (a + 2^31) / 2 for a >= 0
  const __m512i hd = _mm512_srai_epi64(_mm512_add_epi64(va, _mm512_set1_epi64(int64_t{1} << 31)), 1);
  const __m512i k48_17 = _mm512_set1_epi64(1515870810);  // Q2.29
  const __m512i kn32_17 = _mm512_set1_epi64(-1010580540);
  const __m512i one_q2 = _mm512_set1_epi64(int64_t{1} << 29);
  __m512i x = wrap_add64(k48_17, srdhm64(hd, kn32_17));
  for (int i = 0; i < 3; ++i) {
    const __m512i one_minus =
        _mm512_srai_epi64(_mm512_slli_epi64(_mm512_sub_epi64(one_q2, srdhm64(hd, x)), 32), 32);
    x = wrap_add64(x, sat_shl64(srdhm64(x, one_minus), 2));
  }
  return sat_shl64(x, 1);
}

// fused_softmax_reciprocal of sum[0 .. g), g <= 16, into recip: the
// normalization and the final shift scalar, the Newton-Raphson steps on 8
// int64 lanes at once; over 8 rows, two independent chains whose latencies
// overlap.
inline void reciprocals(const uint32_t* sum, int32_t g, uint32_t* recip) {
  if (g == 1) {  // one row: the scalar chain is shorter than the vector one
    recip[0] = fused_softmax_reciprocal(sum[0]);
    return;
  }
  alignas(64) int64_t a[16] = {};  // (sum << h) - 2^31, in [0, 2^31)
  int h[16] = {};
  for (int32_t r = 0; r < g; ++r) {
    h[r] = fp::count_leading_zeros(sum[r]);
    a[r] = static_cast<int32_t>((sum[r] << h[r]) - (uint32_t{1} << 31));
  }
  alignas(64) int64_t r31[16];
  const __m512i x0 = newton8(_mm512_load_si512(a));
  if (g > 8) _mm512_store_si512(r31 + 8, newton8(_mm512_load_si512(a + 8)));
  _mm512_store_si512(r31, x0);
  for (int32_t r = 0; r < g; ++r) {
    const uint32_t v = static_cast<uint32_t>(static_cast<int32_t>(r31[r]));
    const int rs = h[r] + kProbBits - 30;
    const uint32_t q = rs >= 0 ? v << rs : v >> -rs;
    recip[r] = q - (q >> kProbBits);
  }
}

// Pass 2: p_j as int16 over the first 2n bytes of the row, 0 outside [begin, end).
inline void row_probs(int32_t* row, int32_t begin, int32_t end, int32_t n, uint32_t recip) {
  unsigned char* bytes = reinterpret_cast<unsigned char*>(row);
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

}  // namespace

void softmax_fused_rows_avx512vnni(int32_t* s, int32_t stride, int32_t rows, const int32_t* begin,
                                   const int32_t* end, int32_t n, const FusedSoftmax& sm) {
  // Each phase over a group of rows before the next phase, so that the rows'
  // serial parts (the max and sum reductions, the scalar reciprocal) overlap.
  constexpr int32_t kGroup = 16;  // two vectors of reciprocals
  const ExpConsts c(sm);
  for (int32_t r0 = 0; r0 < rows; r0 += kGroup) {
    const int32_t g = rows - r0 < kGroup ? rows - r0 : kGroup;
    int32_t* row[kGroup];  // [g]
    int32_t smax[kGroup] = {};
    __m512i vsum[kGroup];
    uint32_t recip[kGroup] = {};
    for (int32_t r = 0; r < g; ++r) {
      row[r] = s + static_cast<ptrdiff_t>(r0 + r) * stride;
      if (begin[r0 + r] < end[r0 + r]) smax[r] = row_max(row[r], begin[r0 + r], end[r0 + r]);
    }
    for (int32_t r = 0; r < g; ++r) {
      const int32_t b0 = begin[r0 + r], n0 = end[r0 + r] - b0;
      if (n0 <= 16 && r + 1 < g && end[r0 + r + 1] - begin[r0 + r + 1] <= 16) {
        // Two rows of at most 16 keys: one step for both (a row of 32 keys' work).
        const int32_t b1 = begin[r0 + r + 1], n1 = end[r0 + r + 1] - b1;
        vsum[r] = vsum[r + 1] = c.zero;
        exps32(row[r] + b0, avx512i::mask16(n0 > 0 ? n0 : 0), _mm512_set1_epi32(smax[r]), row[r + 1] + b1,
               avx512i::mask16(n1 > 0 ? n1 : 0), _mm512_set1_epi32(smax[r + 1]), c, vsum[r], vsum[r + 1]);
        ++r;
        continue;
      }
      vsum[r] = row_exps(row[r], b0, end[r0 + r], smax[r], c);
    }
    uint32_t sum[kGroup];  // [g]
    for (int32_t r = 0; r < g; ++r) {
      // an empty row's sum is 0 (no exps); any value >= 65447 keeps reciprocals in its domain
      sum[r] = begin[r0 + r] < end[r0 + r] ? static_cast<uint32_t>(_mm512_reduce_add_epi32(vsum[r])) : 65536u;
    }
    reciprocals(sum, g, recip);
    for (int32_t r = 0; r < g; ++r) {
      if (begin[r0 + r] < end[r0 + r]) {
        row_probs(row[r], begin[r0 + r], end[r0 + r], n, recip[r]);
      } else {
        std::memset(row[r], 0, 2 * static_cast<size_t>(n));
      }
    }
  }
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX512VNNI
