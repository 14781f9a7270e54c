// model/model_forward.h: the one forward of a whole model, written once for
// every dtype: forward() below, over a set of steps in one dtype (Ops) and
// observer hooks (Obs). The f32 forward and decode
// (model/transformer_f32.cpp: F32Steps), the s8 / s16 ones
// (model/transformer_fixed.cpp: FixedSteps) and the converter's float
// calibration forward (quant/calibrate_transformer.cpp: CalibrationSteps,
// scalar in double) each bring their steps, named as below:
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
//       ffn_down               x_t += y_t = u W2^T + b2
//       norm_rows              post-norm: x_t = N2(x_t)
//   final_norm                 h [m, E] = N(x) (or x) over the output rows
//   lm_head                    out [m, vocab] = h W^T (no head: out = h)
//
// The dtype differences live in the steps (the integer ones: the residual is
// int32 on one grid, the sub-layer inputs are the activation type, the
// attention writes its output over its input, ffn_down accumulates straight
// onto the residual). The forward calls the observer hooks below at the same
// places for every dtype; the run-time forwards pass NoObserver (every hook
// empty and inline: no code, no call per row; the integer one adds its
// per-stage report for the converter), the calibration forward records its
// ranges and snapshots through them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/arena.h"
#include "attn/tensor.h"
#include "attn/transformer.h"

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
  void final_norm(const M&) const {}        // h, the head's input or the output hidden state
  bool every_row() const { return false; }  // reads no row: the last FFN may skip what no output needs
};

// m = a dense [rows, cols] buffer carved from arena.
template <class T>
Status carve(Arena& arena, int32_t rows, int32_t cols, Matrix<T>* m) {
  T* p = nullptr;
  ATTN_TRY(arena.alloc_array(static_cast<size_t>(rows) * static_cast<size_t>(cols), &p));
  *m = matrix(p, rows, cols);
  return Status::kOk;
}

// The output rows of an n-token call: [first, first + count).
struct OutputRange {
  int32_t first = 0;
  int32_t count = 0;
};
inline OutputRange output_range(OutputRows rows, int32_t n) {
  OutputRange r;
  r.first = rows == OutputRows::kLast ? n - 1 : 0;
  r.count = rows == OutputRows::kAll ? n : 1;  // kLast, kFirst: one row
  return r;
}

// The rows of the FFN tile at row r0 of n: T, or what is left.
inline int32_t tile_rows_at(int32_t r0, int32_t tile, int32_t n) { return tile < n - r0 ? tile : n - r0; }

// The n tokens at positions pos0 .. pos0 + n - 1 through the model, the
// output rows [o.first, o.first + o.count) into out ([o.count, vocab], or
// [o.count, E] without a head); T: the FFN tile's rows. ops: the steps, with the model's
// config (ops.c) and weights (ops.w); Ops::Res is the residual stream's
// element (float, or int32), Ops::Act a sub-layer input's. The caller checked
// the weights, tokens and arena: no step fails, but attend's status is passed
// through. The arena is left with the buffers carved; the caller releases.
template <class Ops, class Obs>
Status forward(const Ops& ops, Obs& obs, const int32_t* tokens, int32_t n, int32_t pos0, OutputRange o,
               int32_t T, typename Ops::Res* out, Arena& arena) {
  using Res = typename Ops::Res;
  using Act = typename Ops::Act;
  const TransformerConfig& c = ops.c;
  const int32_t E = c.embed_dim, F = c.ffn_dim;
  Matrix<Res> x;
  Matrix<Act> h, y;
  ATTN_TRY(carve(arena, n, E, &x));  // x [n, E] the residual stream
  ATTN_TRY(carve(arena, n, E, &h));  // h [n, E] a sub-layer's input
  y = h;                             // y [n, E] a sub-layer's output: over h, or (below) its own
  if (!Ops::kAttendInPlace) ATTN_TRY(carve(arena, n, E, &y));

  ops.embed(tokens, pos0, x);  // x = token (+ position) (+ type) rows
  obs.residual(x);
  if (c.embedding_norm) ops.norm_rows(ops.w.embedding_norm, x, x);  // x = N(x)
  obs.stage(0, x);

  for (int32_t l = 0; l < c.num_layers; ++l) {
    const typename Ops::Layer& lw = ops.w.layers[l];
    // Attention sub-layer.
    ops.sublayer_in(lw, 1, x, h);          // h = N1(x), or x
    ATTN_TRY(ops.attend(l, h, y, arena));  // y = Attn(h)
    ops.add_residual(lw, x, y);            // x += y
    obs.residual(x);
    if (!c.pre_norm) ops.norm_rows(lw.norm1, x, x);  // x = N1(x)
    obs.stage(2 * l + 1, x);

    // FFN sub-layer, T rows at a time (the last layer: only the output rows,
    // where the steps allow it and the observer reads no other).
    const size_t tile = arena.mark();
    Matrix<Act> u, g;                                   // u, g [T, F]
    ATTN_TRY(carve(arena, T, F, &u));                   // u: W1's output, then W2's input
    if (c.gated_ffn) ATTN_TRY(carve(arena, T, F, &g));  // g: W3's output
    const bool outputs_only = Ops::kLastFfnOutputRowsOnly && l == c.num_layers - 1 && !obs.every_row();
    const int32_t end = outputs_only ? o.first + o.count : n;
    for (int32_t r0 = outputs_only ? o.first : 0; r0 < end; r0 += T) {
      const int32_t rows = tile_rows_at(r0, T, end);
      const Matrix<Res> xt = x.rows_slice(r0, rows);                               // [rows, E]
      const Matrix<Act> ht = h.rows_slice(r0, rows), yt = y.rows_slice(r0, rows);  // [rows, E]
      const Matrix<Act> ut = u.rows_slice(0, rows), gt = g.rows_slice(0, rows);    // [rows, F]
      ops.sublayer_in(lw, 2, xt, ht);                                              // h_t = N2(x_t), or x_t
      obs.ffn_in(l, ht);
      ops.ffn_up(lw.ffn, ht, ut, gt);  // u = h_t W1^T + b1; g = h_t W3^T + b3
      obs.ffn_up(l, ut, gt);
      ops.ffn_act(lw.ffn, ut, gt);  // u = act(u) (* g)
      obs.ffn_act(l, ut);
      ops.ffn_down(lw.ffn, ut, yt, xt);  // x_t += y_t = u W2^T + b2 (the integer steps: no y_t)
      obs.ffn_down(l, yt);
      obs.residual(xt);
      if (!c.pre_norm) ops.norm_rows(lw.norm2, xt, xt);  // x_t = N2(x_t)
    }
    arena.release(tile);
    obs.stage(2 * l + 2, x);
  }

  // Final norm and LM head over the output rows.
  const int32_t m = o.count;
  const Matrix<Res> xo = x.rows_slice(o.first, m);  // [m, E]
  const Matrix<Act> ho = h.rows_slice(o.first, m);  // [m, E]
  if (c.head == LmHead::kNone) {
    ops.final_norm(xo, matrix(out, m, E));  // out [m, E] = N(x), or x
    obs.final_norm(matrix(out, m, E));
  } else {
    ops.final_norm(xo, ho);  // h = N(x), or x
    obs.final_norm(ho);
    ops.lm_head(ho, matrix(out, m, c.vocab_size));  // out [m, vocab] = h W^T
  }
  return Status::kOk;
}

}  // namespace detail
}  // namespace attn
