// kernels/tile_driver.h: the f32 dot_gemm, written once for every SIMD ISA
// (and the arguments of nn_gemm, and with_size, which every SIMD kernel's
// tail blocks use to pick a block size at run time):
//   out[Nb, Ma] = alpha * b[Nb, K] a[Ma, K]^T (+ biases), both operands read
//   along K: the linear (a = w, b = x) and the scores of a few query rows
//   (a = k, b = q).
// Blocks of RA <= 4 rows of `a` by CB rows of `b` keep RA x CB vectors of
// partial dot products in registers; blocks of 4 rows of `a` are the outer
// loop, so they stay in L1 while the rows of `b` stream past them. The last
// rows and columns take one narrower block.
//
// An ISA instantiates it with its vector ops V (kernels/x86/avx2_f32.h,
// kernels/neon/neon_f32.h):
//   using Vec;  static constexpr int32_t kLanes;
//   static Vec zero();  static Vec load(const float* p);
//   static Vec fma(Vec acc, Vec a, Vec b);        // acc + a b
//   template <size_t RA, size_t CB>
//   static void finish(const DotArgs& g, int32_t i0, int32_t j0, DotTile<V, RA, CB>& t);
// finish adds the K tail (t.k to K: masked vectors or scalar), sums the lanes,
// scales, adds the biases and stores out[j0 + c][i0 .. i0 + RA).
// Each product a[i] . b[j] accumulates in the same order whatever the block
// sizes, so the block shapes change speed, never results: dot_gemm_by_row
// (one row of `a` at a time, for weights streamed from memory,
// kernels/stream.h) gives the same bits as dot_gemm.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/arch.h"

namespace attn {
namespace detail {

struct DotArgs {
  const float* a;  // [Ma, K], row stride lda
  int32_t lda;
  const float* b;  // [Nb, K], row stride ldb
  int32_t ldb;
  int32_t K;
  float* out;  // [Nb, Ma], row stride ldo
  int32_t ldo;
  const float* bias_i;  // [Ma] or null: added along the contiguous index
  const float* bias_j;  // [Nb] or null: added along the row index
  float alpha;          // scales the products, before the biases
};

// The arguments of the other product, nn_gemm (each ISA's own loops, in its
// header): c[M, N] = alpha * a[M, K] b[K, N], the right operand read along N.
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

// f(std::integral_constant<size_t, n>()) for the run-time n in [1, N], nothing
// for n outside it: a tail block's height or width, picked at run time, as the
// compile-time size of its template (the SIMD kernels' last rows and columns).
template <size_t N, class F>
inline void with_size(int32_t n, F&& f) {
  if constexpr (N > 0) {
    if (n == static_cast<int32_t>(N)) {
      f(std::integral_constant<size_t, N>());
    } else {
      with_size<N - 1>(n, f);
    }
  }
}

// One block after its whole vectors: the rows it read and the partial sums.
template <class V, size_t RA, size_t CB>
struct DotTile {
  const float* a[RA];
  const float* b[CB];
  int32_t k;                    // the vectors covered [0, k); finish takes [k, K)
  typename V::Vec acc[RA][CB];  // acc[r][c]: kLanes partial sums of a[r] . b[c]
};

// out[j0 + c][i0 .. i0 + RA) for c < CB.
template <class V, size_t RA, size_t CB>
inline void dot_gemm_block(const DotArgs& g, int32_t i0, int32_t j0) {
  DotTile<V, RA, CB> t;
  ATTN_UNROLL
  for (size_t r = 0; r < RA; ++r)
    t.a[r] = g.a + (static_cast<ptrdiff_t>(i0) + static_cast<ptrdiff_t>(r)) * g.lda;
  ATTN_UNROLL
  for (size_t c = 0; c < CB; ++c)
    t.b[c] = g.b + (static_cast<ptrdiff_t>(j0) + static_cast<ptrdiff_t>(c)) * g.ldb;
  ATTN_UNROLL
  for (size_t r = 0; r < RA; ++r) {
    ATTN_UNROLL
    for (size_t c = 0; c < CB; ++c) t.acc[r][c] = V::zero();
  }
  int32_t k = 0;
  for (; k + V::kLanes <= g.K; k += V::kLanes) {
    typename V::Vec bv[CB];
    ATTN_UNROLL
    for (size_t c = 0; c < CB; ++c) bv[c] = V::load(t.b[c] + k);
    ATTN_UNROLL
    for (size_t r = 0; r < RA; ++r) {
      const typename V::Vec av = V::load(t.a[r] + k);
      ATTN_UNROLL
      for (size_t c = 0; c < CB; ++c) t.acc[r][c] = V::fma(t.acc[r][c], av, bv[c]);
    }
  }
  t.k = k;
  V::template finish<RA, CB>(g, i0, j0, t);
}

// All Nb columns of rows [i0, i0 + RA).
template <class V, size_t RA, size_t CB>
inline void dot_gemm_rows(const DotArgs& g, int32_t i0, int32_t Nb) {
  int32_t j = 0;
  for (; j + static_cast<int32_t>(CB) <= Nb; j += static_cast<int32_t>(CB))
    dot_gemm_block<V, RA, CB>(g, i0, j);
  with_size<CB - 1>(Nb - j, [&](auto n) { dot_gemm_block<V, RA, decltype(n)::value>(g, i0, j); });
}

// The whole product, in blocks of 4 rows of `a` by CB rows of `b`.
template <class V, size_t CB>
inline void dot_gemm(const DotArgs& g, int32_t Ma, int32_t Nb) {
  int32_t i = 0;
  for (; i + 4 <= Ma; i += 4) dot_gemm_rows<V, 4, CB>(g, i, Nb);
  with_size<3>(Ma - i, [&](auto r) { dot_gemm_rows<V, decltype(r)::value, CB>(g, i, Nb); });
}

// The same product one row of `a` at a time: each row read once, front to
// back, for a matrix `a` that comes from memory (kernels/stream.h).
template <class V, size_t CB>
inline void dot_gemm_by_row(const DotArgs& g, int32_t Ma, int32_t Nb) {
  for (int32_t i = 0; i < Ma; ++i) dot_gemm_rows<V, 1, CB>(g, i, Nb);
}

}  // namespace detail
}  // namespace attn
