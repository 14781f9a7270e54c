// scores, float32, x86-64 AVX2/FMA: s[T,S] = q[T,d] k[S,d]^T * scale.
//
// With a head dimension of 16..64 a dot product per score is too short to
// amortize its horizontal sum, so for T >= kPanelMinRows query rows the keys
// go through K^T panels: 16 keys at a time are transposed (8 x 8 register
// transposes) into a [d, 16] panel on the stack, and the broadcast product of
// internal/avx2_f32.h (6 rows x 16 keys per block, no horizontal sums) runs
// every query row against it. The transpose is S*d moves per call against
// T*S*d multiply-adds. Fewer rows (decoding a token or two), or d above the
// panel's depth, take the dot-product kernel on the rows of k directly.
#include "internal/arch.h"

#if ATTN_HAVE_AVX2
#include "internal/avx2_f32.h"
#include "internal/kernels_f32.h"

namespace attn {
namespace detail {
namespace {

constexpr int32_t kPanelKeys = 16;    // keys per panel: the micro-kernel's width
constexpr int32_t kPanelDepth = 256;  // largest d the panel holds: 16 KiB on the stack
constexpr int32_t kPanelMinRows = 4;  // below this the transposes cost more than they save

// panel[c][j] = k[n0 + j][c] for c < d, j < nk (<= 16); panel row stride 16.
void pack_kt(ConstMatF32 k, int32_t n0, int32_t nk, float* panel) {
  const int32_t d = k.cols;
  int32_t j = 0;
  for (; j + 8 <= nk; j += 8) {
    const float* src = k.row(n0 + j);  // 8 key rows [8, d], stride k.stride
    int32_t c = 0;
    for (; c + 8 <= d; c += 8) {
      __m256 r[8];
      for (int32_t i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + static_cast<ptrdiff_t>(i) * k.stride + c);
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
      float* dst = panel + static_cast<ptrdiff_t>(c) * kPanelKeys + j;  // [8 features, 8 keys]
      for (int32_t i = 0; i < 4; ++i) {
        _mm256_storeu_ps(dst + i * kPanelKeys, _mm256_permute2f128_ps(u[i], u[i + 4], 0x20));
        _mm256_storeu_ps(dst + (i + 4) * kPanelKeys, _mm256_permute2f128_ps(u[i], u[i + 4], 0x31));
      }
    }
    for (; c < d; ++c) {  // feature tail
      for (int32_t i = 0; i < 8; ++i)
        panel[c * kPanelKeys + j + i] = src[static_cast<ptrdiff_t>(i) * k.stride + c];
    }
  }
  for (; j < nk; ++j) {  // key tail
    const float* src = k.row(n0 + j);
    for (int32_t c = 0; c < d; ++c) panel[c * kPanelKeys + j] = src[c];
  }
}

}  // namespace

void scores_f32_avx2(ConstMatF32 q, ConstMatF32 k, float scale, MatF32 s) {
  const int32_t T = q.rows, S = k.rows, d = q.cols;
  if (T < kPanelMinRows || d > kPanelDepth) {
    // s^T as dot_gemm sees it: out[t][j .. j+4) = k[j .. j+4) . q[t]
    const avx2::DotArgs g{k.data, k.stride, q.data, q.stride, d, s.data, s.stride, nullptr, nullptr, scale};
    avx2::dot_gemm(g, S, T);
    return;
  }
  alignas(32) float panel[kPanelDepth * kPanelKeys];  // K^T of 16 keys [d, 16]
  for (int32_t n0 = 0; n0 < S; n0 += kPanelKeys) {
    const int32_t nk = S - n0 < kPanelKeys ? S - n0 : kPanelKeys;
    pack_kt(k, n0, nk, panel);
    const avx2::NnArgs g{q.data, q.stride, panel, kPanelKeys, d, scale, s.data + n0, s.stride};
    avx2::nn_gemm(g, T, nk);  // s[:, n0 .. n0 + nk) = scale * q panel
  }
}

}  // namespace detail
}  // namespace attn

#endif  // ATTN_HAVE_AVX2
