// linear, float32, x86-64 AVX2/FMA: y[M,N] = x[M,K] w[N,K]^T + bias[N].
//
// Both operands are read along K, as PyTorch stores them, with any stride.
// A dot product per output needs a horizontal sum, and at K = 64 that sum
// (and the 3-row blocks' remainder) took about half the time of the 8 FMA
// steps it closes. So for kPanelMinRows rows or more, w goes through W^T
// panels of 16 columns (pack_t16 of kernels/x86/avx2_f32.h, N*K moves per call
// against M*N*K multiply-adds) and the broadcast product nn_gemm runs every
// row of x against each: no horizontal sums. Fewer rows (decoding a token),
// or K above the panel's depth, take dot_gemm on the rows of w directly
// (a = w: 4 output columns per 128-bit result, bias along them; b = x),
// one row of w at a time where w comes from memory (kernels/stream.h: the
// same bits, twice the read bandwidth).
//
// linear_panels_f32_avx2 is the same product on panels packed once per model
// (pack_panels_f32_avx2, from pack_weights_f32): at 16 rows the per-call
// transpose was about a fifth of a projection. Both paths run panel_pass, so
// they give the same bits up to K = kPanelDepth (above it only the packed
// path has panels; the per-call one takes dot_gemm).
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2
#include "kernels/kernels_f32.h"
#include "kernels/stream.h"
#include "kernels/x86/avx2_f32.h"

namespace attn {
namespace detail {
namespace {

constexpr int32_t kPanelMinRows = 4;  // below this the transposes cost more than they save

// y[:, n0 .. n0 + nc) = x panel + bias[n0 .. n0 + nc); panel [K, 16].
void panel_pass(ConstMatF32 x, const float* panel, int32_t n0, int32_t nc, const float* bias, MatF32 y) {
  const int32_t M = x.rows;
  const NnArgs g{x.data, x.stride, panel, avx2::kPanelCols, x.cols, 1.0f, y.data + n0, y.stride};
  avx2::nn_gemm(g, M, nc);
  if (bias == nullptr) return;
  // Plain stores for a full panel: masked stores are slow on AMD cores, and a
  // narrow last panel is rare (N % 16).
  if (nc == avx2::kPanelCols) {
    const __m256 b0 = _mm256_loadu_ps(bias + n0), b1 = _mm256_loadu_ps(bias + n0 + 8);
    for (int32_t r = 0; r < M; ++r) {
      float* o = y.row(r) + n0;  // [16]
      _mm256_storeu_ps(o, _mm256_add_ps(_mm256_loadu_ps(o), b0));
      _mm256_storeu_ps(o + 8, _mm256_add_ps(_mm256_loadu_ps(o + 8), b1));
    }
  } else {
    for (int32_t r = 0; r < M; ++r) {
      float* o = y.row(r) + n0;  // [nc]
      for (int32_t j = 0; j < nc; ++j) o[j] += bias[n0 + j];
    }
  }
}

void dot_path(ConstMatF32 x, ConstMatF32 w, const float* bias, MatF32 y) {
  const DotArgs g{w.data, w.stride, x.data, x.stride, x.cols, y.data, y.stride, bias, nullptr, 1.0f};
  if (stream_weights(x.rows, w.rows, w.cols, sizeof(float))) return avx2::dot_gemm_by_row(g, w.rows, x.rows);
  avx2::dot_gemm(g, w.rows, x.rows);
}

}  // namespace

void linear_f32_avx2(ConstMatF32 x, ConstMatF32 w, const float* bias, MatF32 y) {
  const int32_t N = w.rows, K = x.cols;
  if (x.rows < kPanelMinRows || K > avx2::kPanelDepth) return dot_path(x, w, bias, y);
  alignas(32) float panel[avx2::kPanelDepth * avx2::kPanelCols];  // W^T of 16 output columns [K, 16]
  for (int32_t n0 = 0; n0 < N; n0 += avx2::kPanelCols) {
    const int32_t nc = N - n0 < avx2::kPanelCols ? N - n0 : avx2::kPanelCols;
    avx2::pack_t16(w.row(n0), w.stride, nc, K, panel);
    panel_pass(x, panel, n0, nc, bias, y);
  }
}

uint64_t panels_floats_f32_avx2(int32_t N, int32_t K) {
  const uint64_t panels = static_cast<uint64_t>((N + avx2::kPanelCols - 1) / avx2::kPanelCols);
  return panels * avx2::kPanelCols * static_cast<uint64_t>(K);  // [panels, K, 16]
}

void pack_panels_f32_avx2(ConstMatF32 w, float* panels) {
  const int32_t N = w.rows, K = w.cols;
  for (int32_t n0 = 0; n0 < N; n0 += avx2::kPanelCols) {
    const int32_t nc = N - n0 < avx2::kPanelCols ? N - n0 : avx2::kPanelCols;
    float* panel = panels + static_cast<ptrdiff_t>(n0) * K;  // [K, 16]
    if (nc < avx2::kPanelCols) {
      for (int32_t i = 0; i < K * avx2::kPanelCols; ++i) panel[i] = 0.0f;
    }
    avx2::pack_t16(w.row(n0), w.stride, nc, K, panel);
  }
}

void linear_panels_f32_avx2(ConstMatF32 x, ConstMatF32 w, const float* panels, const float* bias, MatF32 y) {
  const int32_t N = w.rows, K = x.cols;
  if (x.rows < kPanelMinRows) return dot_path(x, w, bias, y);
  for (int32_t n0 = 0; n0 < N; n0 += avx2::kPanelCols) {
    const int32_t nc = N - n0 < avx2::kPanelCols ? N - n0 : avx2::kPanelCols;
    panel_pass(x, panels + static_cast<ptrdiff_t>(n0) * K, n0, nc, bias, y);
  }
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
