// internal/kernels_f32.h: the float32 kernel variants and the one chosen for
// this target. Variants do no checking: the public ops in attn/kernels.h and
// plan_attention() validate shapes once, before any hot loop.
//
// Every op has a portable scalar `ref` variant, always compiled: the oracle
// the SIMD variants are tested against (tests/variants_f32_test.cpp). A SIMD
// variant is declared for every target; its file compiles to nothing unless
// the ISA flag in internal/arch.h is set, so only call it under that flag.
#pragma once

#include <cstdint>

#include "attn/tensor.h"

namespace attn {
namespace detail {

// ---- op signatures ------------------------------------------------------------
//   linear       y[M,N] = x[M,K] w[N,K]^T + b[N]      (b may be null)
//   scores       s[T,S] = q[T,d] k[S,d]^T * scale
//   softmax_row  in place over n entries; -INFINITY -> 0; all -INFINITY -> all 0
//   weighted_sum o[T,d] = p[T,S] v[S,d]
#define ATTN_DECLARE_F32_VARIANTS(isa)                                              \
  void linear_f32_##isa(ConstMatF32 x, ConstMatF32 w, const float* bias, MatF32 y); \
  void scores_f32_##isa(ConstMatF32 q, ConstMatF32 k, float scale, MatF32 s);       \
  void softmax_row_f32_##isa(float* row, int32_t n);                                \
  void weighted_sum_f32_##isa(ConstMatF32 p, ConstMatF32 v, MatF32 o);

ATTN_DECLARE_F32_VARIANTS(ref)     // portable scalar
ATTN_DECLARE_F32_VARIANTS(avx2)    // x86-64 AVX2 + FMA          (ATTN_HAVE_AVX2)
ATTN_DECLARE_F32_VARIANTS(neon64)  // AArch64 Advanced SIMD      (ATTN_HAVE_NEON64)
ATTN_DECLARE_F32_VARIANTS(neon32)  // ARMv7-A NEON               (ATTN_HAVE_NEON32)
ATTN_DECLARE_F32_VARIANTS(mve)     // Cortex-M55 Helium, float   (ATTN_HAVE_MVE_FP)
#undef ATTN_DECLARE_F32_VARIANTS

void rope_f32_ref(MatF32 x, int32_t head_dim, int32_t pos0, float base);  // x[n, heads*hd], in place

// ---- the variant dispatch.cpp picked for this target (no checks) -----------
void linear_f32(ConstMatF32 x, ConstMatF32 w, const float* bias, MatF32 y);
void scores_f32(ConstMatF32 q, ConstMatF32 k, float scale, MatF32 s);
void softmax_row_f32(float* row, int32_t n);
void weighted_sum_f32(ConstMatF32 p, ConstMatF32 v, MatF32 o);
void rope_f32(MatF32 x, int32_t head_dim, int32_t pos0, float base);

// ---- weights packed once (attn/attention.h: pack_weights_f32) --------------
// The sets whose linear multiplies by W^T panels (avx2) transpose W into a
// panel on every call; with the panels made once, they skip that step.
// Panel layout: ceil(N / 16) panels [K, 16] back to back, panel p holding
// columns [16p, 16p + 16) of W^T, the last one zero-padded.
//   linear_panels_floats  floats the panels of a [N, K] weight take; 0 where
//                         this build's linear reads W as stored
//   pack_panels           panels[ceil(N/16), K, 16] = W^T of w[N, K]
//   linear_packed         linear_f32 reading `panels` (null: w) where it helps
uint64_t linear_panels_floats_f32(int32_t N, int32_t K);
void pack_panels_f32(ConstMatF32 w, float* panels);
void linear_packed_f32(ConstMatF32 x, ConstMatF32 w, const float* panels, const float* bias, MatF32 y);
uint64_t panels_floats_f32_avx2(int32_t N, int32_t K);  // (ATTN_HAVE_AVX2)
void pack_panels_f32_avx2(ConstMatF32 w, float* panels);
void linear_panels_f32_avx2(ConstMatF32 x, ConstMatF32 w, const float* panels, const float* bias, MatF32 y);

// Name of the variant set dispatch.cpp picked, e.g. "ref" or "avx2".
const char* kernel_set_f32();

}  // namespace detail
}  // namespace attn
