// attn/kernels.h: the float32 ops forward_f32() is built from, public so
// users can compose their own layers. Each validates its views (kNullArgument,
// kBadShape) and then runs the variant the kernel table (src/kernels/kernel_table.h) picked for this
// target. Matrices are row-major with element strides (see attn/tensor.h).
// Outputs must not overlap inputs, except where an op says "in place".
#pragma once

#include <cstdint>

#include "attn/status.h"
#include "attn/tensor.h"

namespace attn {

// y [M, N] = x [M, K] * w[N, K]^T + bias [N]. w is PyTorch's [out, in];
// bias may be null (no bias).
Status linear_f32(ConstMatF32 x, ConstMatF32 w, const float* bias, MatF32 y);

// s [T, S] = q [T, d] * k [S, d]^T * scale: one head's attention scores.
Status scores_f32(ConstMatF32 q, ConstMatF32 k, float scale, MatF32 s);

// Row softmax of s [T, S], in place: p = exp(s - max) / sum(exp(s - max)).
// Entries equal to -INFINITY (masked) come out exactly 0. A row whose every
// entry is -INFINITY (fully masked) comes out all 0, not NaN.
Status softmax_f32(MatF32 s);

// o [T, d] = p [T, S] * v [S, d]: one head's weighted sum of values.
Status weighted_sum_f32(ConstMatF32 p, ConstMatF32 v, MatF32 o);

// Rotary position embedding of x [n, heads * head_dim], in place: row r sits
// at position pos0 + r; in each head the pairs (i, i + head_dim/2) rotate by
// pos * base^(-2i/head_dim) (HF Llama's half-split pairing). head_dim even,
// base > 0. Errors: kBadShape, kBadRope, kBadPosition.
Status rope_f32(MatF32 x, int32_t head_dim, int32_t pos0, float base);

// Head split: heads [H, T, d] (dense) from x [T, H * d]; row t, columns
// [h*d, (h+1)*d) of x become heads[h][t].
Status head_split_f32(ConstMatF32 x, int32_t num_heads, float* heads);

// Head concat, the inverse: x [T, H * d] from heads [H, T, d] (dense).
Status head_concat_f32(const float* heads, int32_t num_heads, MatF32 x);

}  // namespace attn
