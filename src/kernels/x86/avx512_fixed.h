// kernels/x86/avx512_fixed.h: x86-64 AVX-512 VNNI building blocks of the int8
// kernels (ATTN_HAVE_AVX512VNNI).
//
// gemm_s8 computes dot[m, n] = sum_k x[m, k] * w[n, k] for int8 x [M, K] and
// w [N, K] (both read along K, any row stride) with vpdpbusd, which takes
// one unsigned and one signed operand: w is packed per call into panels of
// 32 output columns, 4 consecutive k per int32 word,
//   panel[g][c] = bytes w[j0 + c][4g .. 4g + 4) xor 0x80   (= w + 128, as u8)
// (zero bytes past K and past the last column), and each x row broadcasts
// one word of 4 signed bytes against a panel row of 16 columns:
//   acc[m][c] = sum_k x[m, k] * (w[c, k] + 128) = dot[m, c] + 128 * xsum[m].
// vpdpbusd adds its four u8 x s8 products (each |.| <= 255 * 128) and the
// accumulator with wrapping int32 arithmetic, so acc - 128 * xsum[m] equals
// dot[m, c] modulo 2^32: exactly ref's int32 sum wherever ref's sum is in
// range (the caller states why it is). No horizontal sums: each accumulator
// lane is one output column, and the epilogue gets 16 columns per vector,
// with the row sum xsum[m] and the column sums wsum[n] = sum_k w[n, k] that
// zero-point corrections need.
//
// The panel lives on the stack (K <= kMaxK: 32 KiB); callers fall back to
// the AVX2 kernels for longer K.
#pragma once

#include "kernels/arch.h"

#if ATTN_HAVE_AVX512VNNI
#include <immintrin.h>

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*() vectors, which
// -Wmaybe-uninitialized reports at every inlined use (GCC PR 105593); only
// the AVX-512 kernel files include this header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace attn {
namespace detail {
namespace avx512i {

constexpr int32_t kPanel = 32;      // output columns per packed panel: 2 x 16 lanes
constexpr int32_t kMaxK = 1024;     // longest K of the packed path
constexpr int32_t kRowChunk = 256;  // rows whose sums are kept on the stack at once

// acc + the u8 x s8 dot products of each dword lane (vpdpbusd), and
// acc + the int16 pair products (vpdpwssd). GCC 12 copies the accumulator of
// _mm512_dpbusd_epi32 into a fresh register before each use (one extra move
// per product in the hot loops, and spills); the asm form ties it to the
// destination. Same instruction, same bits.
inline __m512i dpbusd(__m512i acc, __m512i u8, __m512i s8) {
#if defined(__GNUC__) && !defined(__clang__)
  __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u8), "v"(s8));
  return acc;
#else
  return _mm512_dpbusd_epi32(acc, u8, s8);
#endif
}
inline __m512i dpwssd(__m512i acc, __m512i a, __m512i b) {
#if defined(__GNUC__) && !defined(__clang__)
  __asm__("vpdpwssd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
  return acc;
#else
  return _mm512_dpwssd_epi32(acc, a, b);
#endif
}

// Lanes [0, n) of 16, n in [0, 16].
inline __mmask16 mask16(int32_t n) { return static_cast<__mmask16>((1u << n) - 1u); }
// Bytes [0, n) of 64, n in [0, 64].
inline __mmask64 mask64(int32_t n) { return n >= 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1; }

// sum_k x[k] over K int8 (wrapping int32; |sum| <= 128 K).
inline int32_t row_sum(const int8_t* x, int32_t K) {
  const __m512i ones = _mm512_set1_epi8(1);
  __m512i acc = _mm512_setzero_si512();
  for (int32_t k = 0; k < K; k += 64)
    acc = _mm512_dpbusd_epi32(acc, ones, _mm512_maskz_loadu_epi8(mask64(K - k), x + k));
  return _mm512_reduce_add_epi32(acc);
}

// Transposes 16 x 16 int32: r[i] lane j <-> r[j] lane i.
inline void transpose16(__m512i (&r)[16]) {
  __m512i a[16], b[16];
  for (int i = 0; i < 8; ++i) {
    a[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    a[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  // b[4q + e] lane l: rows 4q .. 4q + 3 at column 4l + e
  for (int q = 0; q < 4; ++q) {
    b[4 * q + 0] = _mm512_unpacklo_epi64(a[4 * q], a[4 * q + 2]);
    b[4 * q + 1] = _mm512_unpackhi_epi64(a[4 * q], a[4 * q + 2]);
    b[4 * q + 2] = _mm512_unpacklo_epi64(a[4 * q + 1], a[4 * q + 3]);
    b[4 * q + 3] = _mm512_unpackhi_epi64(a[4 * q + 1], a[4 * q + 3]);
  }
  // A 4 x 4 transpose of 128-bit lanes across b[e], b[4 + e], b[8 + e], b[12 + e].
  for (int e = 0; e < 4; ++e) {
    const __m512i c0 = _mm512_shuffle_i32x4(b[e], b[4 + e], 0x88);
    const __m512i c1 = _mm512_shuffle_i32x4(b[e], b[4 + e], 0xDD);
    const __m512i c2 = _mm512_shuffle_i32x4(b[8 + e], b[12 + e], 0x88);
    const __m512i c3 = _mm512_shuffle_i32x4(b[8 + e], b[12 + e], 0xDD);
    r[e] = _mm512_shuffle_i32x4(c0, c2, 0x88);       // column e
    r[8 + e] = _mm512_shuffle_i32x4(c0, c2, 0xDD);   // column 8 + e
    r[4 + e] = _mm512_shuffle_i32x4(c1, c3, 0x88);   // column 4 + e
    r[12 + e] = _mm512_shuffle_i32x4(c1, c3, 0xDD);  // column 12 + e
  }
}

// Packs rows [0, n) of w (n <= 32, K bytes each) into panel [ceil(K/4)][32]
// (see the top of the file) and their sums into wsum[0..1] (16 columns each).
inline void pack_panel(const int8_t* w, int32_t ldw, int32_t n, int32_t K, int32_t* panel, __m512i* wsum) {
  const int32_t G = (K + 3) / 4;
  const __m512i ones = _mm512_set1_epi8(1);
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  for (int32_t h = 0; h < 2; ++h) {
    __m512i s = _mm512_setzero_si512();
    if (16 * h >= n) {  // no columns in this half: gemm_s8 reads only the first
      wsum[h] = s;
      continue;
    }
    for (int32_t k = 0; k < K; k += 64) {
      const __mmask64 km = mask64(K - k);
      __m512i r[16];  // rows 16h + c: bytes [k, k + 64)
      for (int32_t c = 0; c < 16; ++c) {
        const int32_t col = 16 * h + c;
        r[c] = col < n ? _mm512_maskz_loadu_epi8(km, w + static_cast<ptrdiff_t>(col) * ldw + k)
                       : _mm512_setzero_si512();
      }
      transpose16(r);  // r[i]: word k / 4 + i of the 16 rows
      const int32_t g0 = k / 4;
      const int32_t gn = G - g0 < 16 ? G - g0 : 16;
      for (int32_t i = 0; i < gn; ++i) {
        s = _mm512_dpbusd_epi32(s, ones, r[i]);
        _mm512_store_si512(panel + static_cast<ptrdiff_t>(g0 + i) * kPanel + 16 * h,
                           _mm512_xor_si512(r[i], flip));
      }
    }
    wsum[h] = s;
  }
}

// 4 bytes of x at p as one int32 word.
inline int32_t word(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Rows [r0, r0 + MR) of x (a chunk whose row sums are xsum) against the
// packed panel's first NH halves (16 columns each): acc[r][h] = sum over the
// panel's words of x row r against columns [16h, 16h + 16), then epi.out
// for each row and half.
template <int MR, int NH, class Epi>
inline void panel_rows(const int8_t* x, int32_t ldx, int32_t K, const int32_t* panel, int32_t m0,
                       const int32_t* xsum, Epi& epi) {
  __m512i acc[size_t{MR}][size_t{NH}];
  ATTN_UNROLL for (int r = 0; r < MR; ++r) ATTN_UNROLL for (int h = 0; h < NH; ++h) acc[r][h] =
      _mm512_setzero_si512();
  const int32_t G = K / 4;
  const int32_t* pg = panel;
  for (int32_t g = 0; g < G; ++g, pg += kPanel) {
    __m512i p[size_t{NH}];
    ATTN_UNROLL for (int h = 0; h < NH; ++h) p[h] = _mm512_load_si512(pg + 16 * h);
    ATTN_UNROLL for (int r = 0; r < MR; ++r) {
      const __m512i b = _mm512_set1_epi32(word(x + static_cast<ptrdiff_t>(r) * ldx + 4 * g));
      ATTN_UNROLL for (int h = 0; h < NH; ++h) acc[r][h] = dpbusd(acc[r][h], p[h], b);
    }
  }
  if (K % 4 != 0) {  // last word: the bytes past K read as 0
    __m512i p[size_t{NH}];
    ATTN_UNROLL for (int h = 0; h < NH; ++h) p[h] = _mm512_load_si512(pg + 16 * h);
    ATTN_UNROLL for (int r = 0; r < MR; ++r) {
      int32_t v = 0;
      std::memcpy(&v, x + static_cast<ptrdiff_t>(r) * ldx + 4 * G, static_cast<size_t>(K % 4));
      const __m512i b = _mm512_set1_epi32(v);
      ATTN_UNROLL for (int h = 0; h < NH; ++h) acc[r][h] = dpbusd(acc[r][h], p[h], b);
    }
  }
  if constexpr (Epi::kRawSums) {  // the epilogue takes 128 xsum[m] off itself
    ATTN_UNROLL for (int r = 0; r < MR; ++r) ATTN_UNROLL for (int h = 0; h < NH; ++h)
        epi.out(m0 + r, h, acc[r][h], xsum[r]);
    return;
  }
  ATTN_UNROLL for (int r = 0; r < MR; ++r) {
    const int32_t xs = xsum[r];
    const __m512i corr = _mm512_set1_epi32(static_cast<int32_t>(static_cast<uint32_t>(xs) << 7));  // 128 xsum
    ATTN_UNROLL for (int h = 0; h < NH; ++h) epi.out(m0 + r, h, _mm512_sub_epi32(acc[r][h], corr), xs);
  }
}

// Every row of the chunk against one packed panel, NH halves.
template <int NH, class Epi>
inline void panel_all_rows(const int8_t* xc, int32_t ldx, int32_t mc, int32_t K, const int32_t* panel,
                           int32_t m0, const int32_t* xsum, Epi& epi) {
  int32_t r = 0;
  for (; r + 8 <= mc; r += 8) {
    panel_rows<8, NH>(xc + static_cast<ptrdiff_t>(r) * ldx, ldx, K, panel, m0 + r, xsum + r, epi);
  }
  if (mc - r >= 4) {
    panel_rows<4, NH>(xc + static_cast<ptrdiff_t>(r) * ldx, ldx, K, panel, m0 + r, xsum + r, epi);
    r += 4;
  }
  for (; r < mc; ++r) {
    panel_rows<1, NH>(xc + static_cast<ptrdiff_t>(r) * ldx, ldx, K, panel, m0 + r, xsum + r, epi);
  }
}

// The walk: for each panel of 32 columns, epi.panel(j0, n, wsum) once (wsum:
// the two halves' column sums), then for every row m and each 16-column
// half h with columns left,
//   epi.out(m, h, dot, xsum[m])
// with dot lane c = sum_k x[m, k] w[j0 + 16h + c, k] (mod 2^32; lanes past
// the last column are garbage). K in [1, kMaxK]. An Epi whose kRawSums is
// true gets dot + 128 xsum[m] instead (the panel's unsigned bias left in).
template <class Epi>
inline void gemm_s8(const int8_t* x, int32_t ldx, int32_t M, const int8_t* w, int32_t ldw, int32_t N,
                    int32_t K, Epi& epi) {
  alignas(64) int32_t panel[(kMaxK / 4) * kPanel];  // [ceil(K/4)][32] words
  int32_t xsum[kRowChunk];                          // row sums of this chunk of x
  __m512i wsum[2];
  for (int32_t m0 = 0; m0 < M; m0 += kRowChunk) {
    const int32_t mc = M - m0 < kRowChunk ? M - m0 : kRowChunk;
    const int8_t* xc = x + static_cast<ptrdiff_t>(m0) * ldx;  // [mc, K]
    for (int32_t r = 0; r < mc; ++r) xsum[r] = row_sum(xc + static_cast<ptrdiff_t>(r) * ldx, K);
    for (int32_t j0 = 0; j0 < N; j0 += kPanel) {
      const int32_t n = N - j0 < kPanel ? N - j0 : kPanel;
      pack_panel(w + static_cast<ptrdiff_t>(j0) * ldw, ldw, n, K, panel, wsum);
      epi.panel(j0, n, wsum);
      if (n > 16) {
        panel_all_rows<2>(xc, ldx, mc, K, panel, m0, xsum, epi);
      } else {
        panel_all_rows<1>(xc, ldx, mc, K, panel, m0, xsum, epi);
      }
    }
  }
}

// Requantization constants of 16 channels, as lanes: the multiplier (and
// its odd lanes moved down), left = max(shift, 0), right = max(-shift, 0),
// and the rounding mask 2^right - 1 and threshold mask >> 1 of mbqm.
struct Requant {
  __m512i mult, mult_odd, left, right, mask, thr;
  static Requant of(__m512i multiplier, __m512i shift) {
    const __m512i zero = _mm512_setzero_si512();
    const __m512i one = _mm512_set1_epi32(1);
    const __m512i right = _mm512_max_epi32(_mm512_sub_epi32(zero, shift), zero);
    const __m512i mask = _mm512_sub_epi32(_mm512_sllv_epi32(one, right), one);
    return {multiplier, _mm512_srli_epi64(multiplier, 32), _mm512_max_epi32(shift, zero), right,
            mask,       _mm512_srai_epi32(mask, 1)};
  }
};

// fp::multiply_by_quantized_multiplier on 16 lanes, bit-exact, for
// multipliers >= 0 (rq: Requant::of the multipliers and shifts). The same
// steps as avx2i::mbqm (see kernels/x86/avx2_fixed.h for why they are exact),
// on 512-bit vectors and mask registers.
inline __m512i mbqm(__m512i x, const Requant& rq) {
  const __m512i a = _mm512_sllv_epi32(x, rq.left);
  const __m512i half = _mm512_set1_epi64(int64_t{1} << 30);
  const __m512i even = _mm512_srli_epi64(_mm512_add_epi64(_mm512_mul_epi32(a, rq.mult), half), 31);
  const __m512i odd =
      _mm512_srli_epi64(_mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(a, 32), rq.mult_odd), half), 31);
  const __m512i h = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i rem = _mm512_and_si512(h, rq.mask);
  const __m512i thr =
      _mm512_mask_add_epi32(rq.thr, _mm512_cmplt_epi32_mask(h, _mm512_setzero_si512()), rq.thr, one);
  const __m512i q = _mm512_srav_epi32(h, rq.right);
  return _mm512_mask_add_epi32(q, _mm512_cmpgt_epi32_mask(rem, thr), q, one);
}

// Clamps 16 int32 lanes to [lo, hi] (within int8) and stores lanes [0, n) as int8 at dst.
inline void store16_s8(int8_t* dst, __m512i v, __m512i lo, __m512i hi, int32_t n) {
  v = _mm512_min_epi32(_mm512_max_epi32(v, lo), hi);
  _mm_mask_storeu_epi8(dst, mask16(n), _mm512_cvtepi32_epi8(v));
}

}  // namespace avx512i
}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX512VNNI
