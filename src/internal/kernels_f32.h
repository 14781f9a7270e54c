// internal/kernels_f32.h: the float32 kernel variants and the one chosen for
// this target. Variants do no checking: the public ops in attn/kernels.h and
// plan_attention() validate shapes once, before any hot loop.
#pragma once

#include <cstdint>

#include "attn/tensor.h"

namespace attn {
namespace detail {

// ---- portable scalar variants: always compiled, the oracle for the others ---
void linear_f32_ref(ConstMatF32 x, ConstMatF32 w, const float* bias,
                    MatF32 y);                                             // y[M,N] = x[M,K] w[N,K]^T + b
void scores_f32_ref(ConstMatF32 q, ConstMatF32 k, float scale, MatF32 s);  // s[T,S] = q[T,d] k[S,d]^T * scale
void softmax_row_f32_ref(float* row, int32_t n);                           // in place over n entries
void weighted_sum_f32_ref(ConstMatF32 p, ConstMatF32 v, MatF32 o);         // o[T,d] = p[T,S] v[S,d]
void rope_f32_ref(MatF32 x, int32_t head_dim, int32_t pos0, float base);   // x[n, heads*hd], in place

// ---- the variant dispatch.cpp picked for this target (no checks) -----------
void linear_f32(ConstMatF32 x, ConstMatF32 w, const float* bias, MatF32 y);
void scores_f32(ConstMatF32 q, ConstMatF32 k, float scale, MatF32 s);
void softmax_row_f32(float* row, int32_t n);
void weighted_sum_f32(ConstMatF32 p, ConstMatF32 v, MatF32 o);
void rope_f32(MatF32 x, int32_t head_dim, int32_t pos0, float base);

// Name of the variant set dispatch.cpp picked, e.g. "ref" or "avx2".
const char* kernel_set_f32();

}  // namespace detail
}  // namespace attn
