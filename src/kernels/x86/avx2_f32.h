// kernels/x86/avx2_f32.h: helpers shared by the float32 AVX2/FMA kernels
// (src/kernels/x86/*_f32_avx2.cpp). Include only under ATTN_HAVE_AVX2.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/arch.h"
#include "kernels/tile_driver.h"

namespace attn {
namespace detail {
namespace avx2 {

// Lane mask with lanes [0, n) set, n in [0, 8]: masked loads read nothing
// outside those lanes (and return 0 there), masked stores write nothing else.
inline __m256i lanes8(int32_t n) {
  static const int32_t kOnes[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kOnes + 8 - n));
}
// The same for 4 lanes, n in [0, 4].
inline __m128i lanes4(int32_t n) {
  static const int32_t kOnes[8] = {-1, -1, -1, -1, 0, 0, 0, 0};
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(kOnes + 4 - n));
}

// ---- dot_gemm: both operands read along K (kernels/tile_driver.h) ------------
// 4 x 3 blocks: 12 accumulators of 8 lanes (7 loads per 12 FMAs), each group
// of 4 folded into one 128-bit vector of 4 sums that are contiguous in the
// output. The K tail (K % 8) uses masked loads, which read nothing past the row.

// [sum(v0), sum(v1), sum(v2), sum(v3)]
inline __m128 sum4(__m256 v0, __m256 v1, __m256 v2, __m256 v3) {
  const __m256 t = _mm256_hadd_ps(_mm256_hadd_ps(v0, v1), _mm256_hadd_ps(v2, v3));
  return _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
}

struct DotOps {
  using Vec = __m256;
  static constexpr int32_t kLanes = 8;
  static Vec zero() { return _mm256_setzero_ps(); }
  static Vec load(const float* p) { return _mm256_loadu_ps(p); }
  static Vec fma(Vec acc, Vec a, Vec b) { return _mm256_fmadd_ps(a, b, acc); }

  template <size_t RA, size_t CB>
  static void finish(const DotArgs& g, int32_t i0, int32_t j0, DotTile<DotOps, RA, CB>& t) {
    if (t.k < g.K) {  // K tail: masked lanes load as 0 and add nothing
      const __m256i m = lanes8(g.K - t.k);
      __m256 bv[CB];
      ATTN_UNROLL
      for (size_t c = 0; c < CB; ++c) bv[c] = _mm256_maskload_ps(t.b[c] + t.k, m);
      ATTN_UNROLL
      for (size_t r = 0; r < RA; ++r) {
        const __m256 av = _mm256_maskload_ps(t.a[r] + t.k, m);
        ATTN_UNROLL
        for (size_t c = 0; c < CB; ++c) t.acc[r][c] = _mm256_fmadd_ps(av, bv[c], t.acc[r][c]);
      }
    }
    const __m256 zero = _mm256_setzero_ps();
    __m128 bias_i = _mm_setzero_ps();
    if (g.bias_i != nullptr) {
      bias_i = RA == 4 ? _mm_loadu_ps(g.bias_i + i0)
                       : _mm_maskload_ps(g.bias_i + i0, lanes4(static_cast<int32_t>(RA)));
    }
    ATTN_UNROLL
    for (size_t c = 0; c < CB; ++c) {
      __m256 col[4] = {zero, zero, zero, zero};  // rows past RA sum to 0 and are not stored
      ATTN_UNROLL
      for (size_t r = 0; r < RA; ++r) col[r] = t.acc[r][c];
      __m128 s = _mm_mul_ps(sum4(col[0], col[1], col[2], col[3]), _mm_set1_ps(g.alpha));
      s = _mm_add_ps(s, bias_i);
      if (g.bias_j != nullptr)
        s = _mm_add_ps(s, _mm_set1_ps(g.bias_j[static_cast<ptrdiff_t>(j0) + static_cast<ptrdiff_t>(c)]));
      float* o = g.out + (static_cast<ptrdiff_t>(j0) + static_cast<ptrdiff_t>(c)) * g.ldo + i0;
      if (RA == 4) {
        _mm_storeu_ps(o, s);
      } else {
        _mm_maskstore_ps(o, lanes4(static_cast<int32_t>(RA)), s);
      }
    }
  }
};

// out[Nb, Ma] = alpha * b[Nb, K] a[Ma, K]^T + biases.
inline void dot_gemm(const DotArgs& g, int32_t Ma, int32_t Nb) { detail::dot_gemm<DotOps, 3>(g, Ma, Nb); }
// The same, one row of a at a time (the same bits; kernels/stream.h).
inline void dot_gemm_by_row(const DotArgs& g, int32_t Ma, int32_t Nb) {
  detail::dot_gemm_by_row<DotOps, 3>(g, Ma, Nb);
}

// ---- nn_gemm: right operand read along N --------------------------------------
// c[M, N] = alpha * a[M, K] b[K, N], all row-major with element strides: the
// "broadcast" product used where the right operand is read along N (queries
// against a K^T panel, probabilities against V). Micro-kernel: R rows x 2 vectors of
// 8 columns in 12 registers; each k broadcasts a[r][k] and loads b[k][n..n+16).
// NnArgs: kernels/tile_driver.h.

// Rows [m0, m0 + R), V full vectors of columns from n0, or (V == 1 with a
// mask) the last n < 8 columns.
template <size_t R, size_t V, bool kMasked>
inline void nn_block(const NnArgs& g, int32_t m0, int32_t n0, __m256i mask) {
  __m256 acc[R][V];
  ATTN_UNROLL
  for (size_t r = 0; r < R; ++r) {
    ATTN_UNROLL
    for (size_t v = 0; v < V; ++v) acc[r][v] = _mm256_setzero_ps();
  }
  const ptrdiff_t lda = g.lda, ldb = g.ldb;
  const int32_t K = g.K;
  const float* a = g.a + static_cast<ptrdiff_t>(m0) * lda;  // [R, K]
  const float* b = g.b + n0;                                // [K, V*8]
  for (int32_t k = 0; k < K; ++k, b += ldb) {
    __m256 bv[V];
    ATTN_UNROLL
    for (size_t v = 0; v < V; ++v) bv[v] = kMasked ? _mm256_maskload_ps(b, mask) : _mm256_loadu_ps(b + 8 * v);
    ATTN_UNROLL
    for (size_t r = 0; r < R; ++r) {
      const __m256 ar = _mm256_broadcast_ss(a + static_cast<ptrdiff_t>(r) * lda + k);
      ATTN_UNROLL
      for (size_t v = 0; v < V; ++v) acc[r][v] = _mm256_fmadd_ps(ar, bv[v], acc[r][v]);
    }
  }
  const __m256 alpha = _mm256_set1_ps(g.alpha);
  ATTN_UNROLL
  for (size_t r = 0; r < R; ++r) {
    float* c = g.c + (static_cast<ptrdiff_t>(m0) + static_cast<ptrdiff_t>(r)) * g.ldc + n0;
    ATTN_UNROLL
    for (size_t v = 0; v < V; ++v) {
      const __m256 out = _mm256_mul_ps(acc[r][v], alpha);
      if (kMasked) {
        _mm256_maskstore_ps(c, mask, out);
      } else {
        _mm256_storeu_ps(c + 8 * v, out);
      }
    }
  }
}

template <size_t R>
inline void nn_rows(const NnArgs& g, int32_t m0, int32_t N) {
  int32_t n = 0;
  for (; n + 16 <= N; n += 16) nn_block<R, 2, false>(g, m0, n, __m256i());
  if (n + 8 <= N) {
    nn_block<R, 1, false>(g, m0, n, __m256i());
    n += 8;
  }
  if (n < N) nn_block<R, 1, true>(g, m0, n, lanes8(N - n));
}

inline void nn_gemm(const NnArgs& g, int32_t M, int32_t N) {
  int32_t m = 0;
  for (; m + 6 <= M; m += 6) nn_rows<6>(g, m, N);
  with_size<5>(M - m, [&](auto r) { nn_rows<decltype(r)::value>(g, m, N); });
}

// ---- K^T panels for nn_gemm ------------------------------------------------------
// Where the right operand is stored [N, K] (keys, weights), nn_gemm runs on
// it transposed, 16 columns at a time: the panel's 16 columns are one full
// nn_block, and its moves (8 x 8 register transposes) are N*K per call
// against M*N*K multiply-adds.
constexpr int32_t kPanelCols = 16;    // panel row stride: the micro-kernel's width
constexpr int32_t kPanelDepth = 256;  // largest K a stack panel holds: 16 KiB

// panel[c][j] = src[j][c] for c < K, j < n (<= 16): src is [n, K] with row
// stride lds; the panel is [K, 16].
inline void pack_t16(const float* src, int32_t lds, int32_t n, int32_t K, float* panel) {
  const ptrdiff_t ld = lds;
  int32_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const float* s = src + j * ld;  // 8 rows [8, K]
    int32_t c = 0;
    for (; c + 8 <= K; c += 8) {
      __m256 r[8];
      for (int32_t i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(s + i * ld + c);
      // 8 x 8 transpose: pairs, then quads, then 128-bit halves.
      __m256 t[8], u[8];
      for (int32_t i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
      }
      for (int32_t i = 0; i < 8; i += 4) {
        u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
        u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
      }
      float* dst = panel + static_cast<ptrdiff_t>(c) * kPanelCols + j;  // [8 of K, 8 of n]
      for (int32_t i = 0; i < 4; ++i) {
        _mm256_storeu_ps(dst + i * kPanelCols, _mm256_permute2f128_ps(u[i], u[i + 4], 0x20));
        _mm256_storeu_ps(dst + (i + 4) * kPanelCols, _mm256_permute2f128_ps(u[i], u[i + 4], 0x31));
      }
    }
    for (; c < K; ++c) {  // K tail
      for (int32_t i = 0; i < 8; ++i) panel[c * kPanelCols + j + i] = s[i * ld + c];
    }
  }
  for (; j < n; ++j) {  // row tail
    const float* s = src + j * ld;
    for (int32_t c = 0; c < K; ++c) panel[c * kPanelCols + j] = s[c];
  }
}

// ---- exp ------------------------------------------------------------------------
// exp of 8 lanes, each <= 0 or -INFINITY; NaN stays NaN. x = n ln2 + r with
// n = round(x / ln2), |r| <= ln2 / 2; exp(r) by a degree-7 polynomial (the
// Cephes expf coefficients), times 2^n built in the exponent field: within
// 1.26 ulp of the exact exp on [-87.33, 0], exactly 0 below ln(FLT_MIN)
// (the softmax, src/kernels/x86/softmax_f32_avx2.cpp, has the checks).
inline __m256 exp_nonpositive(__m256 x) {
  const __m256 kMin = _mm256_set1_ps(-87.336544f);              // ln(FLT_MIN): 2^n stays a normal float
  const __m256 underflow = _mm256_cmp_ps(x, kMin, _CMP_LT_OQ);  // false for NaN
  x = _mm256_max_ps(kMin, x);  // maxps returns its second operand when either is NaN: NaN propagates
  // n = round(x * log2(e)) by the 1.5 * 2^23 trick: adding it leaves n + 127
  // (the biased exponent of 2^n, in [1, 127]) in the low mantissa bits of t.
  const __m256 kShift = _mm256_set1_ps(12582912.0f + 127.0f);
  const __m256 t = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), kShift);
  const __m256 n = _mm256_sub_ps(t, kShift);
  // r = x - n * ln2, ln2 split in two so that n * ln2_hi is exact.
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  // exp(r) = 1 + r + r^2 * P(r)
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  const __m256 r2 = _mm256_mul_ps(r, r);
  p = _mm256_fmadd_ps(p, r2, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  // times 2^n: move n + 127 into the exponent field.
  p = _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(t), 23)));
  return _mm256_andnot_ps(underflow, p);
}

// Sum of the 8 lanes.
inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// sqrt(x), correctly rounded as std::sqrt is (one SQRTSS). Not std::sqrt:
// the standard library's inline function, left uninlined at -O0, would be a
// weak symbol shared with the baseline files (ATTN_ALWAYS_INLINE, attn/tensor.h).
inline float sqrt1(float x) { return _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(x))); }

// The norms' first pass: y = x + r (x where r is null) over a row of n, and
// the lane sums of v (kSquares: of v^2), 8 lanes at a time, the tail through
// masked loads and stores (0 in the absent lanes, which add nothing).
template <bool kSquares>
inline __m256 residual_sums(const float* x, const float* r, int32_t n, float* y) {
  const auto step = [](__m256 v, __m256 acc) {
    return kSquares ? _mm256_fmadd_ps(v, v, acc) : _mm256_add_ps(acc, v);
  };
  const int32_t n8 = n & ~7;
  __m256 acc = _mm256_setzero_ps();
  for (int32_t j = 0; j < n8; j += 8) {
    __m256 v = _mm256_loadu_ps(x + j);
    if (r != nullptr) v = _mm256_add_ps(v, _mm256_loadu_ps(r + j));
    _mm256_storeu_ps(y + j, v);
    acc = step(v, acc);
  }
  if (n8 < n) {
    const __m256i tail = lanes8(n - n8);
    __m256 v = _mm256_maskload_ps(x + n8, tail);
    if (r != nullptr) v = _mm256_add_ps(v, _mm256_maskload_ps(r + n8, tail));
    _mm256_maskstore_ps(y + n8, tail, v);
    acc = step(v, acc);
  }
  return acc;
}

// The vector ops of the activations (kernels/activation_f32.h): DotOps'
// (8 lanes, load, fma) and the tail through masked loads and stores, which
// touch nothing past the row. The clamp keeps a NaN: minps / maxps return
// their second operand when either is NaN.
struct MapOps : DotOps {
  static Vec dup(float c) { return _mm256_set1_ps(c); }
  static void store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  static Vec load_first(const float* p, int32_t n) { return _mm256_maskload_ps(p, lanes8(n)); }
  static void store_first(float* p, int32_t n, Vec v) { _mm256_maskstore_ps(p, lanes8(n), v); }
  static Vec add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
  static Vec mul(Vec a, Vec b) { return _mm256_mul_ps(a, b); }
  static Vec clamp(Vec v, float lo, float hi) { return _mm256_max_ps(dup(lo), _mm256_min_ps(dup(hi), v)); }
  static Vec div_negative(Vec p, Vec q) { return _mm256_div_ps(p, q); }
  // sigmoid(z) = 1 / (1 + exp(-z)) of 8 lanes, any sign: with e = exp(-|z|)
  // (never overflows), 1 / (1 + e) for z >= 0 and e / (1 + e) below. NaN stays NaN.
  static Vec sigmoid(Vec z) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 e = exp_nonpositive(_mm256_or_ps(z, sign));          // exp(-|z|)
    const __m256 num = _mm256_blendv_ps(_mm256_set1_ps(1.0f), e, z);  // z's sign bit picks e
    return _mm256_div_ps(num, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
  }
};

}  // namespace avx2
}  // namespace detail
}  // namespace attn
