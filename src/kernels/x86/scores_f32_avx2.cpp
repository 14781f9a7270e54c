// scores, float32, x86-64 AVX2/FMA: s[T,S] = q[T,d] k[S,d]^T * scale.
//
// With a head dimension of 16..64 a dot product per score is too short to
// amortize its horizontal sum, so for T >= kPanelMinRows query rows the keys
// go through K^T panels: 16 keys at a time are transposed (8 x 8 register
// transposes) into a [d, 16] panel on the stack, and the broadcast product of
// kernels/x86/avx2_f32.h (6 rows x 16 keys per block, no horizontal sums) runs
// every query row against it. The transpose is S*d moves per call against
// T*S*d multiply-adds. Fewer rows (decoding a token or two), or d above the
// panel's depth, take the dot-product kernel on the rows of k directly.
#include "kernels/arch.h"

#if ATTN_HAVE_AVX2
#include "kernels/kernels_f32.h"
#include "kernels/x86/avx2_f32.h"

namespace attn {
namespace detail {
namespace {

constexpr int32_t kPanelKeys = avx2::kPanelCols;    // keys per panel: the micro-kernel's width
constexpr int32_t kPanelDepth = avx2::kPanelDepth;  // largest d the panel holds
constexpr int32_t kPanelMinRows = 4;                // below this the transposes cost more than they save

}  // namespace

void scores_f32_avx2(ConstMatF32 q, ConstMatF32 k, float scale, MatF32 s) {
  const int32_t T = q.rows, S = k.rows, d = q.cols;
  if (T < kPanelMinRows || d > kPanelDepth) {
    // s^T as dot_gemm sees it: out[t][j .. j+4) = k[j .. j+4) . q[t]
    const DotArgs g{k.data, k.stride, q.data, q.stride, d, s.data, s.stride, nullptr, nullptr, scale};
    avx2::dot_gemm(g, S, T);
    return;
  }
  alignas(32) float panel[kPanelDepth * kPanelKeys];  // K^T of 16 keys [d, 16]
  for (int32_t n0 = 0; n0 < S; n0 += kPanelKeys) {
    const int32_t nk = S - n0 < kPanelKeys ? S - n0 : kPanelKeys;
    avx2::pack_t16(k.row(n0), k.stride, nk, d, panel);
    const NnArgs g{q.data, q.stride, panel, kPanelKeys, d, scale, s.data + n0, s.stride};
    avx2::nn_gemm(g, T, nk);  // s[:, n0 .. n0 + nk) = scale * q panel
  }
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
