// kernels/x86/avx2_fixed.h: x86-64 AVX2 building blocks of the integer kernels.
//
// Only exact integer arithmetic: operands are sign-extended to int16 and
// multiplied with _mm256_madd_epi16 (16x16 -> two products summed in int32,
// which never saturates below (-2^15)^2 * 2); never _mm256_maddubs_epi16,
// which saturates its int16 pair sums. Integer addition is associative, so a
// sum taken in another order is the same bits as ref's as long as no partial
// sum leaves the accumulator's range; each user states why it cannot.
// Requantization stays scalar (kernels/fixed_point.h): one call per output,
// the very function ref calls.
#pragma once

#include "kernels/arch.h"
#include "kernels/fixed_blocks.h"
#include "kernels/tile_driver.h"

#if ATTN_HAVE_AVX2
#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace attn {
namespace detail {
namespace avx2i {

// 16 int8 at p, sign-extended to int16, minus z.
template <bool SUB = true>
inline __m256i load16_s8(const int8_t* p, __m256i z) {
  const __m256i v = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return SUB ? _mm256_sub_epi16(v, z) : v;
}
inline __m256i load16_s16(const int16_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// [sum(a0), sum(a1), sum(a2), sum(a3)] of four 8 x int32 vectors (wrapping).
inline __m128i hsum4_epi32(__m256i a0, __m256i a1, __m256i a2, __m256i a3) {
  const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(a0, a1), _mm256_hadd_epi32(a2, a3));
  return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

inline int64_t hsum_epi64(__m256i a) {
  const __m128i s = _mm_add_epi64(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
  return _mm_cvtsi128_si64(s) + _mm_extract_epi64(s, 1);
}

// Row-by-row dot-product blocks over a shared length K (both operands read
// along K, any row stride): out[i][j] = sum_k a'[i, k] * b'[j, k] for i < MR,
// j < NR. K's tail (< 16) is scalar.

// int8 a and b minus their zero points: a' = a - za, b' = b - zb, int32 sum
// (wrapping: |term| <= 255^2, an int32 lane holds 2 K / 16 terms, and the ref
// sum, which the caller keeps in int32, decides the result).
// SUB_A / SUB_B false: za / zb are 0 and their subtractions are skipped.
template <int MR, int NR, bool SUB_A = true, bool SUB_B = true>
inline void dot_block_s8(const int8_t* a, int32_t lda, int32_t za, const int8_t* b, int32_t ldb, int32_t zb,
                         int32_t K, int32_t (*out)[4]) {
  __m256i acc[size_t{MR}][4];
  ATTN_UNROLL for (int i = 0; i < MR; ++i) ATTN_UNROLL for (int j = 0; j < 4; ++j) acc[i][j] =
      _mm256_setzero_si256();
  const __m256i vza = _mm256_set1_epi16(static_cast<int16_t>(za));
  const __m256i vzb = _mm256_set1_epi16(static_cast<int16_t>(zb));
  int32_t k = 0;
  for (; k + 16 <= K; k += 16) {
    __m256i va[size_t{MR}];  // [16] int16 per row
    ATTN_UNROLL for (int i = 0; i < MR; ++i) va[i] =
        load16_s8<SUB_A>(a + static_cast<ptrdiff_t>(i) * lda + k, vza);
    ATTN_UNROLL for (int j = 0; j < NR; ++j) {
      const __m256i vb = load16_s8<SUB_B>(b + static_cast<ptrdiff_t>(j) * ldb + k, vzb);
      ATTN_UNROLL for (int i = 0; i < MR; ++i) acc[i][j] =
          _mm256_add_epi32(acc[i][j], _mm256_madd_epi16(va[i], vb));
    }
  }
  ATTN_UNROLL for (int i = 0; i < MR; ++i) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out[i]),
                     hsum4_epi32(acc[i][0], acc[i][1], acc[i][2], acc[i][3]));
  }
  for (; k < K; ++k) {
    ATTN_UNROLL for (int i = 0; i < MR; ++i) ATTN_UNROLL for (int j = 0; j < NR; ++j) {
      const int32_t t = (int32_t{a[static_cast<ptrdiff_t>(i) * lda + k]} - za) *
                        (int32_t{b[static_cast<ptrdiff_t>(j) * ldb + k]} - zb);
      out[i][j] = static_cast<int32_t>(static_cast<uint32_t>(out[i][j]) + static_cast<uint32_t>(t));
    }
  }
}

// int16 a times int8 b, int64 sum. |term| <= 2^15 * 2^7 = 2^22, so int32
// lanes are exact over chunks of 256 K (a chunk's whole sum <= 2^30, its
// horizontal sum included); chunks add up in int64.
template <int MR, int NR>
inline void dot_block_s16x8(const int16_t* a, int32_t lda, const int8_t* b, int32_t ldb, int32_t K,
                            int64_t (*out)[4]) {
  constexpr int32_t kChunk = 256;
  ATTN_UNROLL for (int i = 0; i < MR; ++i) ATTN_UNROLL for (int j = 0; j < 4; ++j) out[i][j] = 0;
  const __m256i zero = _mm256_setzero_si256();
  int32_t k = 0;
  while (k + 16 <= K) {
    const int32_t kend = K - k > kChunk ? k + kChunk : K;
    __m256i acc[size_t{MR}][4];
    ATTN_UNROLL for (int i = 0; i < MR; ++i) ATTN_UNROLL for (int j = 0; j < 4; ++j) acc[i][j] = zero;
    for (; k + 16 <= kend; k += 16) {
      __m256i va[size_t{MR}];  // [16] int16 per row
      ATTN_UNROLL for (int i = 0; i < MR; ++i) va[i] = load16_s16(a + static_cast<ptrdiff_t>(i) * lda + k);
      ATTN_UNROLL for (int j = 0; j < NR; ++j) {
        const __m256i vb = load16_s8<false>(b + static_cast<ptrdiff_t>(j) * ldb + k, zero);
        ATTN_UNROLL for (int i = 0; i < MR; ++i) acc[i][j] =
            _mm256_add_epi32(acc[i][j], _mm256_madd_epi16(va[i], vb));
      }
    }
    ATTN_UNROLL for (int i = 0; i < MR; ++i) {
      int32_t s[4];
      _mm_storeu_si128(reinterpret_cast<__m128i*>(s),
                       hsum4_epi32(acc[i][0], acc[i][1], acc[i][2], acc[i][3]));
      ATTN_UNROLL for (int j = 0; j < NR; ++j) out[i][j] += s[j];
    }
  }
  for (; k < K; ++k) {
    ATTN_UNROLL for (int i = 0; i < MR; ++i) ATTN_UNROLL for (int j = 0; j < NR; ++j) {
      out[i][j] +=
          int32_t{a[static_cast<ptrdiff_t>(i) * lda + k]} * int32_t{b[static_cast<ptrdiff_t>(j) * ldb + k]};
    }
  }
}

// int16 a times int16 b, int64 sum. A madd pair sum lies in
// [-2^31 + 2^16, 2^31]: only 2^31 (both pairs (-2^15)^2) wraps, to INT32_MIN,
// which no other sum reaches. Subtracting 1 (wrapping) maps every pair sum
// exactly into int32; it is widened to int64 at once, and the 1s are added
// back at the end.
template <int MR, int NR>
inline void dot_block_s16x16(const int16_t* a, int32_t lda, const int16_t* b, int32_t ldb, int32_t K,
                             int64_t (*out)[4]) {
  __m256i acc[size_t{MR}][4];  // 4 x int64
  ATTN_UNROLL for (int i = 0; i < MR; ++i) ATTN_UNROLL for (int j = 0; j < 4; ++j) acc[i][j] =
      _mm256_setzero_si256();
  const __m256i one = _mm256_set1_epi32(1);
  int32_t k = 0;
  for (; k + 16 <= K; k += 16) {
    __m256i va[size_t{MR}];  // [16] int16 per row
    ATTN_UNROLL for (int i = 0; i < MR; ++i) va[i] = load16_s16(a + static_cast<ptrdiff_t>(i) * lda + k);
    ATTN_UNROLL for (int j = 0; j < NR; ++j) {
      const __m256i vb = load16_s16(b + static_cast<ptrdiff_t>(j) * ldb + k);
      ATTN_UNROLL for (int i = 0; i < MR; ++i) {
        const __m256i t = _mm256_sub_epi32(_mm256_madd_epi16(va[i], vb), one);  // pair sums - 1
        const __m256i w = _mm256_add_epi64(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(t)),
                                           _mm256_cvtepi32_epi64(_mm256_extracti128_si256(t, 1)));
        acc[i][j] = _mm256_add_epi64(acc[i][j], w);
      }
    }
  }
  const int64_t ones = int64_t{8} * (k / 16);
  ATTN_UNROLL for (int i = 0; i < MR; ++i) ATTN_UNROLL for (int j = 0; j < NR; ++j) out[i][j] =
      hsum_epi64(acc[i][j]) + ones;
  for (; k < K; ++k) {
    ATTN_UNROLL for (int i = 0; i < MR; ++i) ATTN_UNROLL for (int j = 0; j < NR; ++j) {
      out[i][j] +=
          int32_t{a[static_cast<ptrdiff_t>(i) * lda + k]} * int32_t{b[static_cast<ptrdiff_t>(j) * ldb + k]};
    }
  }
}

// fp::multiply_by_quantized_multiplier on 8 lanes, bit-exact, for
// multipliers >= 0 (so SRDHM's one saturating case, INT32_MIN^2, cannot
// occur); left = max(shift, 0), right = max(-shift, 0) per lane.
// SRDHM: gemmlowp's (ab + nudge) / 2^31 truncated, nudge 2^30 or 1 - 2^30 by
// the sign of ab, equals floor((ab + 2^30) / 2^31) on both signs (for
// negative v = ab + 1 - 2^30, trunc(v / 2^31) = ceil(v / 2^31) =
// floor((v + 2^31 - 1) / 2^31)); its low 32 bits are bits 31..62 of
// ab + 2^30, which a logical 64-bit shift gives as well as an arithmetic one.
inline __m256i mbqm(__m256i x, __m256i mult, __m256i left, __m256i right) {
  const __m256i a = _mm256_sllv_epi32(x, left);  // wrapping, as fp::wrap_shl
  const __m256i half = _mm256_set1_epi64x(int64_t{1} << 30);
  const __m256i even = _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(a, mult), half), 31);
  const __m256i odd = _mm256_srli_epi64(
      _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(mult, 32)), half), 31);
  const __m256i h = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  // fp::rounding_divide_by_pot(h, right)
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i mask = _mm256_sub_epi32(_mm256_sllv_epi32(one, right), one);
  const __m256i rem = _mm256_and_si256(h, mask);
  const __m256i thr =
      _mm256_sub_epi32(_mm256_srai_epi32(mask, 1), _mm256_cmpgt_epi32(_mm256_setzero_si256(), h));
  return _mm256_sub_epi32(_mm256_srav_epi32(h, right), _mm256_cmpgt_epi32(rem, thr));
}

// Requantization constants of one per-channel group, as lanes, with what
// mbqm(x, rq) would otherwise work out per call: the odd lanes' multipliers
// moved down, and the rounding shift's mask and threshold.
struct Requant {
  __m256i mult, left, right;
  __m256i mult_odd, mask, half_mask;  // mult >> 32 (64-bit lanes); 2^right - 1; mask >> 1
  // From 8 channels' Q0.31 multipliers and shifts (fp::multiply_by_quantized_multiplier's).
  static Requant of(__m256i multiplier, __m256i shift) {
    const __m256i zero = _mm256_setzero_si256();
    const __m256i one = _mm256_set1_epi32(1);
    const __m256i right = _mm256_max_epi32(_mm256_sub_epi32(zero, shift), zero);
    const __m256i mask = _mm256_sub_epi32(_mm256_sllv_epi32(one, right), one);
    return {multiplier, _mm256_max_epi32(shift, zero), right, _mm256_srli_epi64(multiplier, 32),
            mask,       _mm256_srai_epi32(mask, 1)};
  }
};

// mbqm(x, rq.mult, rq.left, rq.right), the same bits, with the constants
// Requant::of worked out once (the projections' epilogue runs it per 8
// outputs).
inline __m256i mbqm(__m256i x, const Requant& rq) {
  const __m256i a = _mm256_sllv_epi32(x, rq.left);
  const __m256i half = _mm256_set1_epi64x(int64_t{1} << 30);
  const __m256i even = _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(a, rq.mult), half), 31);
  const __m256i odd =
      _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), rq.mult_odd), half), 31);
  const __m256i h = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  const __m256i rem = _mm256_and_si256(h, rq.mask);
  const __m256i thr = _mm256_sub_epi32(rq.half_mask, _mm256_cmpgt_epi32(_mm256_setzero_si256(), h));
  return _mm256_sub_epi32(_mm256_srav_epi32(h, rq.right), _mm256_cmpgt_epi32(rem, thr));
}

// Clamp 8 int32 lanes to [lo, hi] and store them as int8 (lo, hi within int8).
inline void store8_s8(int8_t* dst, __m256i v, __m256i lo, __m256i hi) {
  v = _mm256_min_epi32(_mm256_max_epi32(v, lo), hi);
  const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));  // exact
  const __m128i b = _mm_packs_epi16(w, w);
  int64_t bytes = _mm_cvtsi128_si64(b);
  std::memcpy(dst, &bytes, 8);
}

// Probabilities times values for MR rows and 16 value columns:
//   out[i][c] = sum_j p[i, j] * v'(j)[c],  c < 16, int32 sum (wrapping),
// v'(j) = load(j): row j's 16 columns as int16. Rows j and j + 1 are
// interleaved so that one madd takes both keys' terms; an odd last key pairs
// with a zero row. The caller bounds the sums.
template <int MR, class LoadV>
inline void pv_block(const int16_t* p, int32_t ldp, int32_t S, const LoadV& load, int32_t (*out)[16]) {
  __m256i lo[size_t{MR}], hi[size_t{MR}];  // columns [0..3, 8..11] and [4..7, 12..15]
  ATTN_UNROLL for (int i = 0; i < MR; ++i) lo[i] = hi[i] = _mm256_setzero_si256();
  int32_t j = 0;
  for (; j < S; j += 2) {
    const __m256i v0 = load(j);
    const __m256i v1 = j + 1 < S ? load(j + 1) : _mm256_setzero_si256();
    const __m256i il = _mm256_unpacklo_epi16(v0, v1);
    const __m256i ih = _mm256_unpackhi_epi16(v0, v1);
    ATTN_UNROLL for (int i = 0; i < MR; ++i) {
      const int16_t* pr = p + static_cast<ptrdiff_t>(i) * ldp;
      const uint32_t p0 = static_cast<uint16_t>(pr[j]);
      const uint32_t p1 = j + 1 < S ? static_cast<uint16_t>(pr[j + 1]) : 0u;
      const __m256i pp = _mm256_set1_epi32(static_cast<int32_t>(p0 | (p1 << 16)));
      lo[i] = _mm256_add_epi32(lo[i], _mm256_madd_epi16(il, pp));
      hi[i] = _mm256_add_epi32(hi[i], _mm256_madd_epi16(ih, pp));
    }
  }
  ATTN_UNROLL for (int i = 0; i < MR; ++i) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out[i]), _mm256_permute2x128_si256(lo[i], hi[i], 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out[i] + 8),
                        _mm256_permute2x128_si256(lo[i], hi[i], 0x31));
  }
}

// ---- Packed-panel int8 products: an outer product, no horizontal sums ------
// gemm_s8: dot[m, n] = sum_k x'[m, k] w'[n, k] for int8 x [M, K] and
// w [N, K] minus their zero points (x' = x - zx, w' = w - zw, as int16:
// |.| <= 255). w' is packed per call into panels of kPanel = 16 output
// channels, two consecutive k per int32 word,
//   panel[g][c] = int16 pair (w'[j0 + c][2g], w'[j0 + c][2g + 1])
// (zero past K and past the last channel), and x' rows are widened to int16
// on the stack once per chunk of rows (zero past K), not once per panel: the
// widening cost as much as a fifth of the product when it ran per panel
// (perf annotate at E = 256). Each row broadcasts its pair
// (x'[2g], x'[2g + 1]) against a panel row, and one madd gives each channel's
// two products summed in int32 lane c: |pair sum| <= 2 * 255^2 < 2^31, and
// the lanes accumulate with wrapping int32 adds, so each lane is ref's int32
// sum modulo 2^32, taken in another order. No horizontal sums: a lane is one
// output, and the epilogue gets 2 x 8 channels of a row per call.
constexpr int32_t kPanel = 16;      // output channels per packed panel: 2 x 8 lanes
constexpr int32_t kMaxK = 1024;     // longest K of the packed path: a 32 KiB panel
constexpr int32_t kRows = 6;        // rows per register block: 12 accumulators
constexpr int32_t kXw = 24 * 1024;  // int16 of widened x' on the stack: 48 KiB, 24 rows at K = kMaxK

// Transposes 8 x 8 int32: r[i] lane j <-> r[j] lane i.
inline void transpose8(__m256i (&r)[8]) {
  __m256i s[8];  // s[4h + j]: rows 4h .. 4h + 3 at columns j | j + 4
  ATTN_UNROLL for (int h = 0; h < 2; ++h) {
    const __m256i t0 = _mm256_unpacklo_epi32(r[4 * h], r[4 * h + 1]);
    const __m256i t1 = _mm256_unpackhi_epi32(r[4 * h], r[4 * h + 1]);
    const __m256i t2 = _mm256_unpacklo_epi32(r[4 * h + 2], r[4 * h + 3]);
    const __m256i t3 = _mm256_unpackhi_epi32(r[4 * h + 2], r[4 * h + 3]);
    s[4 * h + 0] = _mm256_unpacklo_epi64(t0, t2);
    s[4 * h + 1] = _mm256_unpackhi_epi64(t0, t2);
    s[4 * h + 2] = _mm256_unpacklo_epi64(t1, t3);
    s[4 * h + 3] = _mm256_unpackhi_epi64(t1, t3);
  }
  ATTN_UNROLL for (int j = 0; j < 4; ++j) {
    r[j] = _mm256_permute2x128_si256(s[j], s[4 + j], 0x20);
    r[4 + j] = _mm256_permute2x128_si256(s[j], s[4 + j], 0x31);
  }
}

// 16 int8 at p minus z, as int16; only [0, n) is read (n >= 1) and the lanes
// from n on are 0.
inline __m256i load16_s8_pad(const int8_t* p, int32_t n, __m256i z) {
  if (n >= 16) return load16_s8<true>(p, z);
  alignas(16) int8_t t[16];  // the padding reads as the zero point: x - z = 0
  std::memset(t, static_cast<int8_t>(_mm256_extract_epi16(z, 0)), sizeof t);
  std::memcpy(t, p, static_cast<size_t>(n));
  return load16_s8<true>(t, z);
}

// Packs rows [0, n) of w minus zw (n <= kPanel, K <= kMaxK bytes each) into
// panel [ceil(K / 2)][kPanel] (32-byte aligned; see above).
inline void pack_panel_s8(const int8_t* w, int32_t ldw, int32_t n, int32_t K, int32_t zw, int32_t* panel) {
  const int32_t G = (K + 1) / 2;
  const __m256i vz = _mm256_set1_epi16(static_cast<int16_t>(zw));
  for (int32_t h = 0; h < 2; ++h) {  // channels [8h, 8h + 8)
    for (int32_t k = 0; k < K; k += 16) {
      __m256i r[8];                                 // channel 8h + c: k .. k + 15 as 8 int16 pairs
      if (n == kPanel && k + 16 <= K && zw == 0) {  // the common case (projections): no padding, no zw
        ATTN_UNROLL for (int32_t c = 0; c < 8; ++c) r[c] =
            load16_s8<false>(w + static_cast<ptrdiff_t>(8 * h + c) * ldw + k, vz);
      } else if (n == kPanel && k + 16 <= K) {
        ATTN_UNROLL for (int32_t c = 0; c < 8; ++c) r[c] =
            load16_s8<true>(w + static_cast<ptrdiff_t>(8 * h + c) * ldw + k, vz);
      } else {
        for (int32_t c = 0; c < 8; ++c) {
          const int32_t ch = 8 * h + c;
          r[c] = ch < n ? load16_s8_pad(w + static_cast<ptrdiff_t>(ch) * ldw + k, K - k, vz)
                        : _mm256_setzero_si256();
        }
      }
      transpose8(r);  // r[i]: pair k / 2 + i of the 8 channels
      const int32_t g0 = k / 2;
      const int32_t gn = G - g0 < 8 ? G - g0 : 8;
      int32_t* dst = panel + static_cast<ptrdiff_t>(g0) * kPanel + 8 * h;  // pair g0, channel 8h
      if (gn == 8) {  // all 8 pairs: no compare per store
        ATTN_UNROLL for (int32_t i = 0; i < 8; ++i)
            _mm256_store_si256(reinterpret_cast<__m256i*>(dst + static_cast<ptrdiff_t>(i) * kPanel), r[i]);
      } else {
        for (int32_t i = 0; i < gn; ++i)
          _mm256_store_si256(reinterpret_cast<__m256i*>(dst + static_cast<ptrdiff_t>(i) * kPanel), r[i]);
      }
    }
  }
}

// acc + v, int32 lanes. GCC (12) puts the sum of an accumulator array's
// `acc = add(acc, madd(..))` in a fresh register and copies it back, and with
// 8 accumulators it spills one to the stack, so that chain runs through
// store forwarding every iteration; the asm form ties the sum to acc.
// Same instruction, same bits.
inline __m256i add_to(__m256i acc, __m256i v) {
#if defined(__GNUC__) && !defined(__clang__)
  __asm__("vpaddd %1, %0, %0" : "+x"(acc) : "x"(v));
  return acc;
#else
  return _mm256_add_epi32(acc, v);
#endif
}

// Rows [0, MR) of x' (xw: [MR][ldxw] int16) against a packed panel of G
// pairs, then epi.out(m0 + r, acc) with acc[h] lane c = dot of row r and
// channel 8h + c of the panel.
template <int MR, class Epi>
inline void panel_rows_s8(const int16_t* xw, int32_t ldxw, int32_t G, const int32_t* panel, int32_t m0,
                          Epi& epi) {
  __m256i acc[size_t{MR}][2];
  ATTN_UNROLL for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  for (int32_t g = 0; g < G; ++g) {
    const __m256i* pg = reinterpret_cast<const __m256i*>(panel + static_cast<ptrdiff_t>(g) * kPanel);
    const __m256i p0 = _mm256_load_si256(pg), p1 = _mm256_load_si256(pg + 1);
    ATTN_UNROLL for (int r = 0; r < MR; ++r) {
      int32_t pair;  // x'[r][2g], x'[r][2g + 1]
      std::memcpy(&pair, xw + static_cast<ptrdiff_t>(r) * ldxw + 2 * g, 4);
      const __m256i b = _mm256_set1_epi32(pair);
      acc[r][0] = add_to(acc[r][0], _mm256_madd_epi16(p0, b));
      acc[r][1] = add_to(acc[r][1], _mm256_madd_epi16(p1, b));
    }
  }
  ATTN_UNROLL for (int r = 0; r < MR; ++r) epi.out(m0 + r, acc[r]);
}

// panel_rows_s8<mr> for a run-time row count mr in [1, kRows].
template <class Epi>
inline void panel_rows_s8_n(int32_t mr, const int16_t* xw, int32_t ldxw, int32_t G, const int32_t* panel,
                            int32_t m0, Epi& epi) {
  with_size<kRows>(mr, [&](auto r) { panel_rows_s8<decltype(r)::value>(xw, ldxw, G, panel, m0, epi); });
}

// The whole product (see above), K in [1, kMaxK]: per chunk of rows, x'
// widened once; per panel of channels [j0, j0 + n), epi.panel(j0, n), then
// epi.out(m, acc) for every row m of the chunk, with acc[h] lane c =
// dot[m, j0 + 8h + c] (lanes past n: 0). Chunks of kXw / ldxw rows (a
// multiple of kRows): the panels are packed again per chunk, which costs
// about 1/kRows of one chunk's products per panel at the smallest chunk.
template <class Epi>
inline void gemm_s8(const int8_t* x, int32_t ldx, int32_t M, int32_t zx, const int8_t* w, int32_t ldw,
                    int32_t N, int32_t zw, int32_t K, Epi& epi) {
  alignas(32) int32_t panel[kMaxK / 2 * kPanel];  // [ceil(K / 2)][kPanel]: 32 KiB
  alignas(32) int16_t xw[kXw];                    // [chunk][ldxw]: x' of one chunk of rows
  const int32_t G = (K + 1) / 2;
  const int32_t ldxw = (K + 15) / 16 * 16;  // whole 16-k chunks
  const int32_t chunk = kXw / ldxw / kRows * kRows;
  static_assert(kXw / kMaxK >= kRows, "a chunk holds at least one register block");
  const __m256i vzx = _mm256_set1_epi16(static_cast<int16_t>(zx));
  for (int32_t m0 = 0; m0 < M; m0 += chunk) {
    const int32_t mc = M - m0 < chunk ? M - m0 : chunk;
    for (int32_t r = 0; r < mc; ++r) {  // x' of row m0 + r
      const int8_t* xr = x + static_cast<ptrdiff_t>(m0 + r) * ldx;
      for (int32_t k = 0; k < K; k += 16)
        _mm256_store_si256(reinterpret_cast<__m256i*>(xw + r * ldxw + k), load16_s8_pad(xr + k, K - k, vzx));
    }
    for (int32_t j0 = 0; j0 < N; j0 += kPanel) {
      const int32_t n = N - j0 < kPanel ? N - j0 : kPanel;
      pack_panel_s8(w + static_cast<ptrdiff_t>(j0) * ldw, ldw, n, K, zw, panel);
      epi.panel(j0, n);
      for (int32_t m = 0; m < mc; m += kRows) {
        const int16_t* xb = xw + static_cast<ptrdiff_t>(m) * ldxw;  // [mr][ldxw]
        panel_rows_s8_n(mc - m < kRows ? mc - m : kRows, xb, ldxw, G, panel, m0 + m, epi);
      }
    }
  }
}

}  // namespace avx2i
}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
