// linear, float32, x86-64 AVX-512: y[M,N] = x[M,K] w[N,K]^T + bias[N].
//
// The AVX2 kernel's broadcast product on W^T panels [K, 16] (the same
// layout: pack_panels_f32_avx2 makes the packed ones), with 16-lane vectors:
// a block of 12 rows of x against 2 panels (32 output columns) in 24 of the
// 32 zmm registers; each k loads a row of each panel and broadcasts
// x[r][k] (2 loads and 12 broadcasts per 24 FMAs, against the AVX2 block's
// 2 and 6 per 12). Each output is the same chain of fused multiply-adds in k
// order as the AVX2 panel path, then the bias added: the same bits.
// Unpacked, the depth is taken 256 at a time (the stack panels), each pass
// resuming the chains the last one stored: any K, the same bits as packed.
// Fewer than 4 rows: the AVX2 kernel's dot products, as its own paths choose.
//
// Only AVX-512F is used; the row sits in the avx512vnni tier (its files'
// flags and CPU check, kernels/x86/cpu_x86.h), so a CPU with AVX-512 but
// without VNNI runs the AVX2 row.
#include "kernels/arch.h"

#if ATTN_HAVE_AVX512VNNI
#include <immintrin.h>

#include <cstddef>

#include "kernels/kernels_f32.h"

namespace attn {
namespace detail {
namespace {

constexpr int32_t kPanelCols = 16;    // the AVX2 panels' width (kernels/x86/avx2_f32.h)
constexpr int32_t kMinRows = 4;       // below: the AVX2 kernel's dot products (as its own paths)
constexpr int32_t kStackDepth = 256;  // unpacked: the depth of one pass (the stack panels)
constexpr size_t kRows = 12;          // rows per block

// One pass over output columns [n0, n0 + 16 P) of the rows of x.
struct Pass {
  ConstMatF32 x;        // [M, k]: this pass's depth of the rows
  const float* panels;  // P panels [k, 16], pstride floats apart
  ptrdiff_t pstride;
  const float* bias;  // added after the product (null: none, or not the last pass)
  bool resume;        // the outputs hold the sums of the earlier depths: go on from them
  int32_t n0;
  __mmask16 last;  // the last panel's lanes to store
  MatF32 y;
};

// Rows [m0, m0 + R) of the pass. Resuming loads the stored sums into the
// accumulators, so a product split in depth is the same chain of fused
// multiply-adds, and the same bits, as one pass.
template <size_t R, size_t P>
void block(const Pass& g, int32_t m0) {
  __m512 acc[R][P];
  ATTN_UNROLL
  for (size_t p = 0; p < P; ++p) {
    const __mmask16 m = p == P - 1 ? g.last : static_cast<__mmask16>(0xFFFF);
    const ptrdiff_t c0 = g.n0 + kPanelCols * static_cast<ptrdiff_t>(p);
    ATTN_UNROLL
    for (size_t r = 0; r < R; ++r)
      acc[r][p] = g.resume ? _mm512_maskz_loadu_ps(m, g.y.row(m0 + static_cast<int32_t>(r)) + c0)
                           : _mm512_setzero_ps();
  }
  const float* a = g.x.row(m0);  // [R, k]
  const ptrdiff_t lda = g.x.stride;
  const int32_t K = g.x.cols;
  for (int32_t k = 0; k < K; ++k) {
    __m512 b[P];
    ATTN_UNROLL
    for (size_t p = 0; p < P; ++p)
      b[p] = _mm512_loadu_ps(g.panels + static_cast<ptrdiff_t>(p) * g.pstride +
                             static_cast<ptrdiff_t>(k) * kPanelCols);
    ATTN_UNROLL
    for (size_t r = 0; r < R; ++r) {
      const __m512 ar = _mm512_set1_ps(a[static_cast<ptrdiff_t>(r) * lda + k]);
      ATTN_UNROLL
      for (size_t p = 0; p < P; ++p) acc[r][p] = _mm512_fmadd_ps(ar, b[p], acc[r][p]);
    }
  }
  ATTN_UNROLL
  for (size_t p = 0; p < P; ++p) {
    const __mmask16 m = p == P - 1 ? g.last : static_cast<__mmask16>(0xFFFF);
    const ptrdiff_t c0 = g.n0 + kPanelCols * static_cast<ptrdiff_t>(p);
    const __m512 bv = g.bias != nullptr ? _mm512_maskz_loadu_ps(m, g.bias + c0) : _mm512_setzero_ps();
    ATTN_UNROLL
    for (size_t r = 0; r < R; ++r) {
      const __m512 out = g.bias != nullptr ? _mm512_add_ps(acc[r][p], bv) : acc[r][p];
      _mm512_mask_storeu_ps(g.y.row(m0 + static_cast<int32_t>(r)) + c0, m, out);
    }
  }
}

template <size_t P>
void rows_of(const Pass& g) {
  int32_t m = 0;
  for (; m + static_cast<int32_t>(kRows) <= g.x.rows; m += static_cast<int32_t>(kRows)) block<kRows, P>(g, m);
  switch (g.x.rows - m) {
#define ATTN_ROWS_CASE(R) \
  case R:                 \
    block<R, P>(g, m);    \
    break;
    ATTN_ROWS_CASE(1)
    ATTN_ROWS_CASE(2)
    ATTN_ROWS_CASE(3)
    ATTN_ROWS_CASE(4)
    ATTN_ROWS_CASE(5)
    ATTN_ROWS_CASE(6)
    ATTN_ROWS_CASE(7)
    ATTN_ROWS_CASE(8)
    ATTN_ROWS_CASE(9)
    ATTN_ROWS_CASE(10)
    ATTN_ROWS_CASE(11)
#undef ATTN_ROWS_CASE
    default:
      break;
  }
}

// Output columns [n0, n0 + nc), nc <= 32, over the depth of x, from the
// panels of those columns (`pstride` floats apart).
void columns(ConstMatF32 x, const float* panels, ptrdiff_t pstride, const float* bias, bool resume,
             int32_t n0, int32_t nc, MatF32 y) {
  const int32_t last = nc > kPanelCols ? nc - kPanelCols : nc;  // 1..16
  const Pass g{x, panels, pstride, bias, resume, n0, static_cast<__mmask16>((1u << last) - 1u), y};
  if (nc > kPanelCols) {
    rows_of<2>(g);
  } else {
    rows_of<1>(g);
  }
}

}  // namespace

// Per call, W^T of 32 output columns at a time, kStackDepth of K at a time
// into two stack panels; depths past the first resume from the stored sums.
void linear_f32_avx512vnni(ConstMatF32 x, ConstMatF32 w, const float* bias, MatF32 y) {
  const int32_t N = w.rows, K = x.cols;
  if (x.rows < kMinRows) return linear_f32_avx2(x, w, bias, y);
  alignas(64) float panels[2 * kStackDepth * kPanelCols];  // 2 x [k, 16]
  for (int32_t n0 = 0; n0 < N; n0 += 2 * kPanelCols) {
    const int32_t nc = N - n0 < 2 * kPanelCols ? N - n0 : 2 * kPanelCols;
    for (int32_t k0 = 0; k0 < K; k0 += kStackDepth) {
      const int32_t kc = K - k0 < kStackDepth ? K - k0 : kStackDepth;
      pack_panels_f32_avx2(ConstMatF32{w.row(n0) + k0, nc, kc, w.stride}, panels);
      columns(x.cols_slice(k0, kc), panels, static_cast<ptrdiff_t>(kc) * kPanelCols,
              k0 + kc == K ? bias : nullptr, k0 > 0, n0, nc, y);
    }
  }
}

void linear_panels_f32_avx512vnni(ConstMatF32 x, ConstMatF32 w, const float* panels, const float* bias,
                                  MatF32 y) {
  const int32_t N = w.rows, K = x.cols;
  if (x.rows < kMinRows) return linear_panels_f32_avx2(x, w, panels, bias, y);
  for (int32_t n0 = 0; n0 < N; n0 += 2 * kPanelCols) {
    const int32_t nc = N - n0 < 2 * kPanelCols ? N - n0 : 2 * kPanelCols;
    columns(x, panels + static_cast<ptrdiff_t>(n0) * K, static_cast<ptrdiff_t>(K) * kPanelCols, bias, false,
            n0, nc, y);
  }
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX512VNNI
