// internal/avx2_f32.h: helpers shared by the float32 AVX2/FMA kernels
// (src/kernels/*/*_f32_avx2.cpp). Include only under ATTN_HAVE_AVX2.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "internal/arch.h"

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

// c[M, N] = alpha * a[M, K] b[K, N], all row-major with element strides: the
// "broadcast" product used where the right operand is read along N (scores
// against K^T, probabilities against V). Micro-kernel: R rows x 2 vectors of
// 8 columns in 12 registers; each k broadcasts a[r][k] and loads b[k][n..n+16).
struct NnArgs {
  const float* a;  // [M, K], row stride lda
  int32_t lda;
  const float* b;  // [K, N], row stride ldb
  int32_t ldb;
  int32_t K;
  float alpha;
  float* c;  // [M, N], row stride ldc
  int32_t ldc;
};

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
  switch (M - m) {
    case 5:
      nn_rows<5>(g, m, N);
      break;
    case 4:
      nn_rows<4>(g, m, N);
      break;
    case 3:
      nn_rows<3>(g, m, N);
      break;
    case 2:
      nn_rows<2>(g, m, N);
      break;
    case 1:
      nn_rows<1>(g, m, N);
      break;
    default:
      break;
  }
}

}  // namespace avx2
}  // namespace detail
}  // namespace attn
