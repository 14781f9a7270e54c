// kernels/kernels_f32.h: the float32 kernel variants (kernels/kernel_table.h
// picks the one each op runs on this target). Variants do no checking: the public ops in attn/kernels.h and
// plan_attention() validate shapes once, before any hot loop.
//
// Every op has a portable scalar `ref` variant, always compiled: the oracle
// the SIMD variants are tested against (the shared variant tester, tests/variant_tester.h). A SIMD
// variant is declared for every target; its file compiles to nothing unless
// the ISA flag in kernels/arch.h is set, so only call it under that flag.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

#include "attn/tensor.h"

namespace attn {
namespace detail {

// ---- op signatures ------------------------------------------------------------
//   linear       y[M,N] = x[M,K] w[N,K]^T + b[N]      (b may be null)
//   scores       s[T,S] = q[T,d] k[S,d]^T * scale
//   softmax_row  in place over n entries; -INFINITY -> 0; all -INFINITY -> all 0;
//                a NaN among the entries -> the whole row NaN (as PyTorch)
//   weighted_sum o[T,d] = p[T,S] v[S,d]
#define ATTN_DECLARE_F32_VARIANTS(isa)                                              \
  void linear_f32_##isa(ConstMatF32 x, ConstMatF32 w, const float* bias, MatF32 y); \
  void scores_f32_##isa(ConstMatF32 q, ConstMatF32 k, float scale, MatF32 s);       \
  void softmax_row_f32_##isa(float* row, int32_t n);                                \
  void weighted_sum_f32_##isa(ConstMatF32 p, ConstMatF32 v, MatF32 o);

ATTN_DECLARE_F32_VARIANTS(ref)   // portable scalar
ATTN_DECLARE_F32_VARIANTS(avx2)  // x86-64 AVX2 + FMA                   (ATTN_HAVE_AVX2)
ATTN_DECLARE_F32_VARIANTS(neon)  // AArch64 Advanced SIMD, ARMv7-A NEON  (ATTN_HAVE_NEON)
ATTN_DECLARE_F32_VARIANTS(mve)   // Cortex-M55 Helium, float            (ATTN_HAVE_MVE_FP)
#undef ATTN_DECLARE_F32_VARIANTS

// The softmax row whose max is -INFINITY (or which is empty): every entry is
// -INFINITY or NaN (max passes may skip NaN). Fully masked: all 0; a NaN
// among them: all NaN, the NaN policy of every softmax_row variant. Off the
// hot path: only rows with no finite score get here.
// NaN tests read the bits (exponent all ones, mantissa not 0): an integer
// compare, so neither a compiler's nor an FPU's handling of unordered
// compares can change them (clang-14 for the Cortex-M55 under QEMU turned
// `x != x` into a row of zeros).
ATTN_ALWAYS_INLINE bool is_nan_bits(float x) {
  uint32_t u = 0;
  std::memcpy(&u, &x, sizeof u);
  return (u & 0x7FFFFFFFu) > 0x7F800000u;
}
// Whether row [n] holds a NaN.
ATTN_ALWAYS_INLINE bool row_has_nan(const float* row, int32_t n) {
  bool nan = false;
  for (int32_t j = 0; j < n; ++j) nan |= is_nan_bits(row[j]);
  return nan;
}
// A constant, not a call: std::numeric_limits' function, called at -O0, would
// be a weak symbol shared by the AVX2 and the baseline files (ATTN_ALWAYS_INLINE).
constexpr float kQuietNaN = std::numeric_limits<float>::quiet_NaN();
// The row of a softmax whose scores hold a NaN: all NaN.
ATTN_ALWAYS_INLINE void softmax_row_nan(float* row, int32_t n) {
  for (int32_t j = 0; j < n; ++j) row[j] = kQuietNaN;
}

ATTN_ALWAYS_INLINE void softmax_row_without_max(float* row, int32_t n) {
  const float fill = row_has_nan(row, n) ? kQuietNaN : 0.0f;
  for (int32_t j = 0; j < n; ++j) row[j] = fill;
}

void rope_f32_ref(MatF32 x, int32_t head_dim, int32_t pos0, float base);  // x[n, heads*hd], in place

// ---- whole-model ops (attn/transformer.h) --------------------------------------
//   layer_norm_row  v = x + r (r may be null); y[n] = (v - mean) / sqrt(var + eps) * w + b
//                   (var biased, b may be null); y may be x or r
//   rms_norm_row    v = x + r; y[n] = v / sqrt(mean(v^2) + eps) * w (b unused); y may be x or r
//   gelu, gelu_tanh, relu, silu
//                   x[n] = act(x) * up (up may be null: act(x)), in place; NaN stays NaN
//     gelu       x/2 (1 + erf(x / sqrt 2))
//     gelu_tanh  x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
//     relu       max(x, 0)
//     silu       x / (1 + exp(-x))
#define ATTN_DECLARE_F32_MODEL_VARIANTS(isa)                                                               \
  void layer_norm_row_f32_##isa(const float* x, const float* r, int32_t n, const float* w, const float* b, \
                                float eps, float* y);                                                      \
  void rms_norm_row_f32_##isa(const float* x, const float* r, int32_t n, const float* w, const float* b,   \
                              float eps, float* y);                                                        \
  void gelu_f32_##isa(float* x, const float* up, int32_t n);                                               \
  void gelu_tanh_f32_##isa(float* x, const float* up, int32_t n);                                          \
  void relu_f32_##isa(float* x, const float* up, int32_t n);                                               \
  void silu_f32_##isa(float* x, const float* up, int32_t n);

ATTN_DECLARE_F32_MODEL_VARIANTS(ref)   // portable scalar
ATTN_DECLARE_F32_MODEL_VARIANTS(avx2)  // x86-64 AVX2 + FMA (ATTN_HAVE_AVX2)
ATTN_DECLARE_F32_MODEL_VARIANTS(neon)  // AArch64 and ARMv7-A NEON (ATTN_HAVE_NEON)
ATTN_DECLARE_F32_MODEL_VARIANTS(mve)   // Cortex-M55 Helium, float (ATTN_HAVE_MVE_FP)
#undef ATTN_DECLARE_F32_MODEL_VARIANTS

// Embedding gather: x[i] = table[tokens[i]] (+ rows[i] when rows is not
// null) (+ add when add is not null), rows of E floats, for i < n. Tokens
// are in range (the caller checked). Memory-bound: ref on every target.
void embed_rows_f32_ref(const float* table, const int32_t* tokens, int32_t n, int32_t E, const float* rows,
                        const float* add, float* x);

// ---- weights packed once (attn/attention.h: pack_weights_f32) --------------
// The avx2 linear multiplies by W^T panels, which it otherwise transposes W
// into on every call. Panel layout: ceil(N / 16) panels [K, 16] back to back,
// panel p holding columns [16p, 16p + 16) of W^T, the last one zero-padded.
//   panels_floats  floats the panels of a [N, K] weight take
//   pack_panels    panels[ceil(N/16), K, 16] = W^T of w[N, K]
//   linear_panels  linear_f32 reading the panels
uint64_t panels_floats_f32_avx2(int32_t N, int32_t K);  // (ATTN_HAVE_AVX2)
void pack_panels_f32_avx2(ConstMatF32 w, float* panels);
void linear_panels_f32_avx2(ConstMatF32 x, ConstMatF32 w, const float* panels, const float* bias, MatF32 y);
// x86-64 AVX-512 (the avx512vnni tier, ATTN_HAVE_AVX512VNNI): linear_f32 and
// linear_panels on the same [K, 16] panels (packed by pack_panels_f32_avx2),
// 32 output columns per block; the same bits as the AVX2 kernels.
void linear_f32_avx512vnni(ConstMatF32 x, ConstMatF32 w, const float* bias, MatF32 y);
void linear_panels_f32_avx512vnni(ConstMatF32 x, ConstMatF32 w, const float* panels, const float* bias,
                                  MatF32 y);

}  // namespace detail
}  // namespace attn
