// The fused attention softmax, int32 scores -> Q0.15 probabilities, x86-64
// AVX2: softmax_fused_row_ref's integer arithmetic (see that file for the
// formulas), bit-exact, 8 keys per step:
//   max         _mm256_max_epi32
//   e_j         u = smax - s (uint32), t = u * step mod 2^32 (_mm256_mullo_epi32),
//               the table entry from two 16-entry factors (below), the
//               per-lane octave shift by _mm256_srlv_epi32;
//               e = 0 where u > diff_limit (unsigned compare); sum in uint32
//               lanes (ref's sum is a uint32 too: addition mod 2^32 in any order)
//   1 / sum     ref's Newton-Raphson steps, 8 rows' sums in 8 lanes;
//               softmax_fused_rows_avx2 runs each phase over 8 rows before
//               the next, so that the rows' reductions overlap
//   p_j         high half of e * recip + 2^31, packed to int16 and stored over
//               bytes [2 j, 2 j + 16): int32 entries [j / 2, j / 2 + 4), all
//               read already (j / 2 + 4 <= j + 8).
// Key tails (< 8) are scalar.
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2
#include <immintrin.h>

#include <cstring>

#include "kernels/exp2_table.h"
#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"

namespace attn {
namespace detail {
namespace {

// High 32 bits of the 8 unsigned products a * b (+ add, 64-bit, per lane).
inline __m256i mulhi_epu32(__m256i a, __m256i b, __m256i add) {
  const __m256i even = _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epu32(a, b), add), 32);
  const __m256i odd =
      _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(b, 32)), add);
  return _mm256_blend_epi32(even, odd, 0xAA);
}

// kExp2Table without a gather: entry 16a + b is the rounded high half of
// kHi[a] * kLo[b], kHi[a] = round(2^24 2^(-a / 16)), kLo[b] =
// round(2^24 2^(-(b + 1/2) / 256)), both 16-entry tables that fit two
// vpermd each. The gather (one per 8 keys) was about a third of the fused
// softmax's time (perf, s8 forward at L = 64, Zen 4); the lookups and the
// multiply below are plain ALU work. The assertion checks all 256 entries.
constexpr uint32_t kHi[16] = {16777216, 16065917, 15384775, 14732511, 14107901, 13509772, 12937002, 12388516,
                              11863283, 11360319, 10878679, 10417458, 9975792,  9552851,  9147842,  8760003};
constexpr uint32_t kLo[16] = {16754518, 16709215, 16664034, 16618976, 16574039, 16529224, 16484530, 16439956,
                              16395504, 16351171, 16306958, 16262865, 16218891, 16175036, 16131300, 16087682};
constexpr uint32_t exp2_entry(int i) {
  return static_cast<uint32_t>((uint64_t{kHi[i >> 4]} * kLo[i & 15] + (uint64_t{1} << 31)) >> 32);
}
constexpr bool entries_match() {
  for (int i = 0; i < (1 << kExp2TableBits); ++i) {
    if (exp2_entry(i) != kExp2Table[i]) return false;
  }
  return true;
}
static_assert(kExp2TableBits == 8 && entries_match(), "kHi x kLo must reproduce kExp2Table exactly");

// A 16-entry lookup per lane: the entry's low 3 bits are idx's (vpermd reads
// only those), its bit 3 is bit 31 of sel (which half).
inline __m256i lookup16(const __m256i (&tab)[2], __m256i idx, __m256i sel) {
  return _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(_mm256_permutevar8x32_epi32(tab[0], idx)),
                                              _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(tab[1], idx)),
                                              _mm256_castsi256_ps(sel)));
}

// The exps' constants, as lanes.
struct ExpConsts {
  uint32_t step;
  int32_t limit;
  __m256i vlimit, vstep, one, round;
  __m256i hi[2], lo[2];  // kHi, kLo as two halves of 8 lanes
  explicit ExpConsts(const FusedSoftmax& sm)
      : step(fused_exp_constants(sm).step),
        limit(fused_exp_constants(sm).limit),
        vlimit(_mm256_set1_epi32(limit)),
        vstep(_mm256_set1_epi32(static_cast<int32_t>(step))),
        one(_mm256_set1_epi32(1)),
        round(_mm256_set1_epi64x(int64_t{1} << 31)) {
    for (int h = 0; h < 2; ++h) {
      hi[h] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kHi + 8 * h));
      lo[h] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kLo + 8 * h));
    }
  }
  // kExp2Table[(t >> 20) & 255] per lane: a = bits 24..27 of t, b = bits 20..23.
  __m256i table(__m256i t) const {
    static_assert(kExpPhaseIndexShift == 20, "a and b are bits 24..27 and 20..23 of t");
    const __m256i a = lookup16(hi, _mm256_srli_epi32(t, 24), _mm256_slli_epi32(t, 4));
    const __m256i b = lookup16(lo, _mm256_srli_epi32(t, 20), _mm256_slli_epi32(t, 8));
    return mulhi_epu32(a, b, round);
  }
};

// max_j s_j over [begin, end) (non-empty).
inline int32_t row_max(const int32_t* row, int32_t begin, int32_t end) {
  int32_t j = begin;
  __m256i vmax = _mm256_set1_epi32(row[begin]);
  for (; j + 8 <= end; j += 8) {
    vmax = _mm256_max_epi32(vmax, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + j)));
  }
  __m128i m4 = _mm_max_epi32(_mm256_castsi256_si128(vmax), _mm256_extracti128_si256(vmax, 1));
  m4 = _mm_max_epi32(m4, _mm_shuffle_epi32(m4, 0x4E));
  m4 = _mm_max_epi32(m4, _mm_shuffle_epi32(m4, 0xB1));
  int32_t smax = _mm_cvtsi128_si32(m4);
  for (; j < end; ++j) smax = row[j] > smax ? row[j] : smax;
  return smax;
}

// Pass 1: e_j in place of s_j over [begin, end) (non-empty), and their sum.
inline uint32_t row_exps(int32_t* row, int32_t begin, int32_t end, int32_t smax, const ExpConsts& k) {
  const __m256i vsmax = _mm256_set1_epi32(smax);
  __m256i vsum = _mm256_setzero_si256();
  int32_t j = begin;
  for (; j + 8 <= end; j += 8) {
    int32_t* pj = row + j;  // [8]
    const __m256i u = _mm256_sub_epi32(vsmax, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pj)));
    const __m256i keep = _mm256_cmpeq_epi32(_mm256_min_epu32(u, k.vlimit), u);  // u <= diff_limit
    const __m256i t = _mm256_mullo_epi32(u, k.vstep);                           // mod 2^32, as ref
    const __m256i x = _mm256_slli_epi32(k.table(t), 1);
    // ((2x >> octave) + 1) >> 1, the octave t >> 28 in [0, 15]
    const __m256i e = _mm256_and_si256(
        keep,
        _mm256_srli_epi32(
            _mm256_add_epi32(_mm256_srlv_epi32(x, _mm256_srli_epi32(t, kExpPhaseOctaveShift)), k.one), 1));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(pj), e);
    vsum = _mm256_add_epi32(vsum, e);
  }
  __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(vsum), _mm256_extracti128_si256(vsum, 1));
  s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
  s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xB1));
  uint32_t sum = static_cast<uint32_t>(_mm_cvtsi128_si32(s4));
  for (; j < end; ++j) {
    const uint32_t e =
        fused_exp(static_cast<uint32_t>(smax) - static_cast<uint32_t>(row[j]), k.step, k.limit);
    row[j] = static_cast<int32_t>(e);
    sum += e;
  }
  return sum;
}

// (a b + 2^30) >> 31 per lane, signed 32-bit a and b (softmax_fused_s32_ref's
// srdhm): its low 32 bits are bits 31..62 of ab + 2^30, which a logical
// 64-bit shift gives as well as an arithmetic one.
inline __m256i srdhm8(__m256i a, __m256i b) {
  const __m256i half = _mm256_set1_epi64x(int64_t{1} << 30);
  const __m256i even = _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(a, b), half), 31);
  const __m256i odd = _mm256_srli_epi64(
      _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(b, 32)), half), 31);
  return _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
}

// fused_softmax_reciprocal of up to 8 rows' sums at once (0 where a sum is 0):
// the same Newton-Raphson steps as ref's one_over_one_plus_a, in 8 lanes, so
// that a group of rows pays for one chain of seven multiplies instead of
// eight (about 6% of an s8 forward at L = 16 ran in the scalar ones).
inline void reciprocals(const uint32_t* sum, int32_t g, uint32_t* recip) {
  alignas(32) int32_t a[8], h[8];  // sum = 2^(31 - h) (1 + a / 2^31), a in [0, 2^31)
  for (int32_t r = 0; r < 8; ++r) {
    const uint32_t sr = r < g ? sum[r] : 0;
    h[r] = sr != 0 ? fp::count_leading_zeros(sr) : kProbBits;
    a[r] = sr != 0 ? static_cast<int32_t>((sr << h[r]) - (uint32_t{1} << 31)) : 0;
  }
  const __m256i va = _mm256_load_si256(reinterpret_cast<const __m256i*>(a));
  const __m256i vh = _mm256_load_si256(reinterpret_cast<const __m256i*>(h));
  // one_over_one_plus_a
  const __m256i half_denominator = _mm256_srli_epi32(_mm256_add_epi32(va, _mm256_set1_epi32(INT32_MIN)), 1);
  __m256i x = _mm256_add_epi32(_mm256_set1_epi32(1515870810),                              // 48/17 in Q2.29
                               srdhm8(half_denominator, _mm256_set1_epi32(-1010580540)));  // -32/17
  for (int i = 0; i < 3; ++i) {
    const __m256i one_minus = _mm256_sub_epi32(_mm256_set1_epi32(1 << 29), srdhm8(half_denominator, x));
    x = _mm256_add_epi32(x, _mm256_slli_epi32(srdhm8(x, one_minus), 2));
  }
  // fp::saturating_shift_left(x, 1)
  const __m256i thr = _mm256_set1_epi32((1 << 30) - 1);
  __m256i r31 = _mm256_slli_epi32(x, 1);
  r31 = _mm256_blendv_epi8(r31, _mm256_set1_epi32(INT32_MAX), _mm256_cmpgt_epi32(x, thr));
  r31 = _mm256_blendv_epi8(r31, _mm256_set1_epi32(INT32_MIN),
                           _mm256_cmpgt_epi32(_mm256_sub_epi32(_mm256_setzero_si256(), thr), x));
  // r = r31 << rs or r31 >> -rs (logical), rs = h + kProbBits - 30; then r - (r >> kProbBits)
  const __m256i rs = _mm256_sub_epi32(vh, _mm256_set1_epi32(30 - kProbBits));
  const __m256i zero = _mm256_setzero_si256();
  const __m256i r = _mm256_srlv_epi32(_mm256_sllv_epi32(r31, _mm256_max_epi32(rs, zero)),
                                      _mm256_max_epi32(_mm256_sub_epi32(zero, rs), zero));
  alignas(32) uint32_t out[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(out), _mm256_sub_epi32(r, _mm256_srli_epi32(r, kProbBits)));
  for (int32_t i = 0; i < g; ++i) recip[i] = sum[i] != 0 ? out[i] : 0;
}

// Pass 2: p_j as int16 over the first 2n bytes of the row, 0 outside
// [begin, end) (non-empty).
inline void row_probs(int32_t* row, int32_t begin, int32_t end, int32_t n, uint32_t recip) {
  const __m256i vrecip = _mm256_set1_epi32(static_cast<int32_t>(recip));
  const __m256i round = _mm256_set1_epi64x(int64_t{1} << 31);
  int32_t j = begin;
  for (; j + 8 <= end; j += 8) {
    const __m256i e = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + j));
    const __m256i p = mulhi_epu32(e, vrecip, round);  // <= 32767
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packs_epi32(p, p), 0x08);
    _mm_storeu_si128(
        reinterpret_cast<__m128i*>(reinterpret_cast<unsigned char*>(row) + 2 * static_cast<ptrdiff_t>(j)),
        _mm256_castsi256_si128(packed));
  }
  for (; j < end; ++j) store_fused_prob(row, j, fused_prob(static_cast<uint32_t>(row[j]), recip));
  for (int32_t k = 0; k < begin; ++k) store_fused_prob(row, k, 0);
  for (int32_t k = end; k < n; ++k) store_fused_prob(row, k, 0);
}

}  // namespace

void softmax_fused_rows_avx2(int32_t* s, int32_t stride, int32_t rows, const int32_t* begin,
                             const int32_t* end, int32_t n, const FusedSoftmax& sm) {
  // Each phase over a group of rows before the next, so that the rows'
  // serial parts (the max and sum reductions) overlap in the out-of-order
  // core instead of running back to back, and the group's reciprocals (a
  // chain of seven dependent 64-bit multiplies) run in one set of lanes. At
  // L = 16 the reciprocal alone took about 7% of an s8 forward when each row
  // ran start to end.
  constexpr int32_t kGroup = 8;
  const ExpConsts k(sm);
  for (int32_t r0 = 0; r0 < rows; r0 += kGroup) {
    const int32_t g = rows - r0 < kGroup ? rows - r0 : kGroup;
    int32_t* row[kGroup];    // [g]
    int32_t smax[kGroup];    // [g]
    uint32_t sum[kGroup];    // [g] sums of exps (>= 65447 where the row is not empty)
    uint32_t recip[kGroup];  // [g]
    for (int32_t r = 0; r < g; ++r) {
      row[r] = s + static_cast<ptrdiff_t>(r0 + r) * stride;
      smax[r] = begin[r0 + r] < end[r0 + r] ? row_max(row[r], begin[r0 + r], end[r0 + r]) : 0;
    }
    for (int32_t r = 0; r < g; ++r) {
      sum[r] = begin[r0 + r] < end[r0 + r] ? row_exps(row[r], begin[r0 + r], end[r0 + r], smax[r], k) : 0;
    }
    reciprocals(sum, g, recip);
    for (int32_t r = 0; r < g; ++r) {
      if (begin[r0 + r] < end[r0 + r]) {
        row_probs(row[r], begin[r0 + r], end[r0 + r], n, recip[r]);
      } else {
        for (int32_t j = 0; j < n; ++j) store_fused_prob(row[r], j, 0);
      }
    }
  }
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
