// model/model_forward.h: the one skeleton of a whole-model forward, and what
// its three writings share. The f32 forward and decode
// (model/transformer_f32.cpp), the s8 / s16 ones (model/transformer_fixed.cpp)
// and the converter's float calibration forward
// (quant/calibrate_transformer.cpp) each spell it out in a function named
// forward(), step by step with the same names in the same order:
//
//   embed                      x [n, E] = token (+ position) (+ type) rows
//   norm_rows                  embedding norm: x = N(x)
//   for each layer:
//     sublayer_in              h [n, E] = N1(x) (pre-norm), or x
//     attend                   y [n, E] = Attn(h) (causal forward, or decode over the layer's cache)
//     add_residual             x += y
//     norm_rows                post-norm: x = N1(x)
//     for each tile of T rows: (scratch u, g [T, F]: O(T F), never O(n F))
//       sublayer_in            h_t = N2(x_t) (pre-norm), or x_t
//       ffn_up                 u = h_t W1^T + b1; gated: g = h_t W3^T + b3
//       ffn_act                u = act(u); gated: act(u) * g
//       ffn_down               y_t = u W2^T + b2
//       add_residual           x_t += y_t
//       norm_rows              post-norm: x_t = N2(x_t)
//   final_norm                 h [m, E] = N(x) (or x) over the output rows
//   lm_head                    out [m, vocab] = h W^T (no head: out = h)
//
// The dtype differences live in each file's small helpers of those names
// (the integer one: the residual is int32 on one grid, the sub-layer inputs
// are the activation type, ffn_down accumulates straight onto the residual,
// so its add_residual is part of ffn_down). Each forward calls the
// observer hooks below at the same places; the run-time forwards pass
// NoObserver (every hook empty and inline: no code, no call per row; the
// integer one adds its per-stage report for the converter), the calibration
// forward records its ranges and snapshots through them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/arena.h"
#include "attn/tensor.h"

namespace attn {
namespace detail {

// The hooks: residual and stage where the residual stream is complete, the
// others after the step of their name. Each receives views (a Matrix of the
// forward's dtype) of what was written.
struct NoObserver {
  template <class M>
  void residual(const M&) const {}  // x (or x_t) after embed and after each add_residual
  template <class M>
  void stage(int32_t, const M&) const {}  // x [n, E] after the embeddings (0), layer l's attention
                                          // (2 l + 1) and FFN (2 l + 2), each with its post-norm
  template <class M>
  void ffn_in(int32_t, const M&) const {}  // h_t, the FFN's input
  template <class M>
  void ffn_up(int32_t, const M&, const M&) const {}  // u, g (g has no data unless gated)
  template <class M>
  void ffn_act(int32_t, const M&) const {}  // u, W2's input
  template <class M>
  void ffn_down(int32_t, const M&) const {}  // y_t, W2's output (float forwards)
  template <class M>
  void final_norm(const M&) const {}  // h, the head's input or the output hidden state
};

// m = a dense [rows, cols] buffer carved from arena.
template <class T>
Status carve(Arena& arena, int32_t rows, int32_t cols, Matrix<T>* m) {
  T* p = nullptr;
  ATTN_TRY(arena.alloc_array(static_cast<size_t>(rows) * static_cast<size_t>(cols), &p));
  *m = matrix(p, rows, cols);
  return Status::kOk;
}

// The rows of the FFN tile at row r0 of n: T, or what is left.
inline int32_t tile_rows_at(int32_t r0, int32_t tile, int32_t n) { return tile < n - r0 ? tile : n - r0; }

}  // namespace detail
}  // namespace attn
