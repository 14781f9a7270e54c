// linear, float32, x86-64 AVX2/FMA: y[M,N] = x[M,K] w[N,K]^T + bias[N], and the
// same product stored transposed, yt[N,M] (how forward() lays out K^T).
//
// Both operands are read along K, as PyTorch stores them: no packing, any
// stride. The micro-kernel keeps a 4 x 3 block of 8-lane partial dot products
// in 12 registers (4 rows of `a`, 3 rows of `b`; 7 loads per 12 FMAs), then
// folds each group of 4 into one 128-bit vector of 4 sums that are contiguous
// in the output: out[j][i .. i+4) = a[i .. i+4) . b[j].
//   linear:   a = w, b = x  ->  out = y   (bias along i, i.e. along N)
//   linear_t: a = x, b = w  ->  out = yt  (bias along j, i.e. along N)
// The K tail (K % 8) uses masked loads, which read nothing past the row.
#include "internal/arch.h"

#if ATTN_HAVE_AVX2
#include <immintrin.h>

#include "internal/avx2_f32.h"
#include "internal/kernels_f32.h"

namespace attn {
namespace detail {
namespace {

using avx2::lanes4;
using avx2::lanes8;

// [sum(v0), sum(v1), sum(v2), sum(v3)]
inline __m128 sum4(__m256 v0, __m256 v1, __m256 v2, __m256 v3) {
  const __m256 t = _mm256_hadd_ps(_mm256_hadd_ps(v0, v1), _mm256_hadd_ps(v2, v3));
  return _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
}

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
};

// out[j0 + c][i0 .. i0 + RA) for c < CB: RA rows of a (<= 4) against CB rows of b (<= 3).
template <size_t RA, size_t CB>
void dot_block(const DotArgs& g, int32_t i0, int32_t j0) {
  const float* a[RA];
  const float* b[CB];
  ATTN_UNROLL
  for (size_t r = 0; r < RA; ++r)
    a[r] = g.a + (static_cast<ptrdiff_t>(i0) + static_cast<ptrdiff_t>(r)) * g.lda;
  ATTN_UNROLL
  for (size_t c = 0; c < CB; ++c)
    b[c] = g.b + (static_cast<ptrdiff_t>(j0) + static_cast<ptrdiff_t>(c)) * g.ldb;
  __m256 acc[RA][CB];  // acc[r][c]: 8 partial sums of a[r] . b[c]
  ATTN_UNROLL
  for (size_t r = 0; r < RA; ++r) {
    ATTN_UNROLL
    for (size_t c = 0; c < CB; ++c) acc[r][c] = _mm256_setzero_ps();
  }

  int32_t k = 0;
  for (; k + 8 <= g.K; k += 8) {
    __m256 bv[CB];
    ATTN_UNROLL
    for (size_t c = 0; c < CB; ++c) bv[c] = _mm256_loadu_ps(b[c] + k);
    ATTN_UNROLL
    for (size_t r = 0; r < RA; ++r) {
      const __m256 av = _mm256_loadu_ps(a[r] + k);
      ATTN_UNROLL
      for (size_t c = 0; c < CB; ++c) acc[r][c] = _mm256_fmadd_ps(av, bv[c], acc[r][c]);
    }
  }
  if (k < g.K) {  // K tail: masked lanes load as 0 and add nothing
    const __m256i m = lanes8(g.K - k);
    __m256 bv[CB];
    ATTN_UNROLL
    for (size_t c = 0; c < CB; ++c) bv[c] = _mm256_maskload_ps(b[c] + k, m);
    ATTN_UNROLL
    for (size_t r = 0; r < RA; ++r) {
      const __m256 av = _mm256_maskload_ps(a[r] + k, m);
      ATTN_UNROLL
      for (size_t c = 0; c < CB; ++c) acc[r][c] = _mm256_fmadd_ps(av, bv[c], acc[r][c]);
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
    for (size_t r = 0; r < RA; ++r) col[r] = acc[r][c];
    __m128 s = sum4(col[0], col[1], col[2], col[3]);
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

template <size_t RA>
void dot_rows(const DotArgs& g, int32_t i0, int32_t Nb) {
  int32_t j = 0;
  for (; j + 3 <= Nb; j += 3) dot_block<RA, 3>(g, i0, j);
  if (Nb - j == 2) dot_block<RA, 2>(g, i0, j);
  if (Nb - j == 1) dot_block<RA, 1>(g, i0, j);
}

// out[Nb, Ma] = b[Nb, K] a[Ma, K]^T + biases. Blocks of 4 rows of `a` are the
// outer loop, so they stay in L1 while the rows of `b` stream past them.
void dot_gemm(const DotArgs& g, int32_t Ma, int32_t Nb) {
  int32_t i = 0;
  for (; i + 4 <= Ma; i += 4) dot_rows<4>(g, i, Nb);
  switch (Ma - i) {
    case 3:
      dot_rows<3>(g, i, Nb);
      break;
    case 2:
      dot_rows<2>(g, i, Nb);
      break;
    case 1:
      dot_rows<1>(g, i, Nb);
      break;
    default:
      break;
  }
}

}  // namespace

void linear_f32_avx2(ConstMatF32 x, ConstMatF32 w, const float* bias, MatF32 y) {
  const DotArgs g{w.data, w.stride, x.data, x.stride, x.cols, y.data, y.stride, bias, nullptr};
  dot_gemm(g, w.rows, x.rows);
}

void linear_t_f32_avx2(ConstMatF32 x, ConstMatF32 w, const float* bias, MatF32 yt) {
  const DotArgs g{x.data, x.stride, w.data, w.stride, x.cols, yt.data, yt.stride, nullptr, bias};
  dot_gemm(g, x.rows, w.rows);
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
