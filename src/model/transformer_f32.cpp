// transformer_f32.cpp: the float32 whole-model forward and decode
// (attn/transformer.h).
//
// The forward is model/model_forward.h's (the same one as the integer forward
// and the converter's calibration forward), over float32 rows: the steps are
// F32Steps below. Attention is the block of attn/attention.h: forward_f32
// (causal mask when the config says so) for a forward, decode_f32 over the
// layer's KV cache for a decode; the rest of the model is written once, for
// both.
#include <cstring>
#include <new>

#include "attention/attend_f32.h"
#include "attn/decode.h"
#include "attn/transformer.h"
#include "kernels/kernel_table.h"
#include "kernels/linear_split.h"
#include "model/model_forward.h"
#include "model/transformer_f32.h"

namespace attn {
namespace {

using detail::best;

bool has_norm_bias(const TransformerConfig& c) { return c.norm == NormKind::kLayerNorm && c.norm_bias; }

Status check_norm(const TransformerConfig& c, const NormWeightsF32& n) {
  return n.weight == nullptr || (has_norm_bias(c) && n.bias == nullptr) ? Status::kNullArgument : Status::kOk;
}

// Every pointer the config needs (kNullArgument).
Status check_weights(const TransformerConfig& c, const TransformerWeightsF32& w) {
  if (w.token_embedding == nullptr || w.layers == nullptr) return Status::kNullArgument;
  if (c.learned_positions && w.position_embedding == nullptr) return Status::kNullArgument;
  if (c.type_vocab_size > 0 && w.type_embedding == nullptr) return Status::kNullArgument;
  if (c.embedding_norm) ATTN_TRY(check_norm(c, w.embedding_norm));
  if (c.final_norm) ATTN_TRY(check_norm(c, w.final_norm));
  if (c.head == LmHead::kUntied && w.lm_head == nullptr) return Status::kNullArgument;
  for (int32_t l = 0; l < c.num_layers; ++l) ATTN_TRY(detail::check_layer_weights_f32(c, w.layers[l]));
  return Status::kOk;
}

// The checks a forward and a decode share, before anything is written:
// plan, weights, pointers, n, rows, token ids, free arena.
Status check_call(const TransformerPlan& plan, const TransformerWeightsF32& w, const int32_t* tokens,
                  int32_t n, OutputRows rows, const float* out, const Arena& arena) {
  ATTN_TRY(detail::check_transformer_plan(plan, DType::kF32));
  const TransformerConfig& c = plan.config;
  ATTN_TRY(check_weights(c, w));
  if (tokens == nullptr || out == nullptr) return Status::kNullArgument;
  if (n <= 0) return Status::kBadQueryLength;
  if (n > plan.max_tokens) return Status::kSequenceTooLong;
  if (rows != OutputRows::kAll && rows != OutputRows::kLast && rows != OutputRows::kFirst)
    return Status::kBadShape;
  for (int32_t i = 0; i < n; ++i) {
    if (tokens[i] < 0 || tokens[i] >= c.vocab_size) return Status::kTokenOutOfRange;
  }
  // Every buffer below fits in plan.arena_bytes: no carve can fail half-way.
  if (arena.free_bytes() < plan.arena_bytes) return Status::kArenaTooSmall;
  return Status::kOk;
}

// ---- the steps, in f32 (model/model_forward.h names them) ----------------------------

// y = x, row by row.
void copy_rows(ConstMatF32 x, MatF32 y) {
  for (int32_t i = 0; i < x.rows; ++i)
    std::memcpy(y.row(i), x.row(i), static_cast<size_t>(x.cols) * sizeof(float));
}

// x += y.
void add_rows(MatF32 x, ConstMatF32 y) {
  for (int32_t i = 0; i < x.rows; ++i) {
    float* xr = x.row(i);
    const float* yr = y.row(i);
    for (int32_t e = 0; e < x.cols; ++e) xr[e] += yr[e];
  }
}

// The steps of detail::forward() over float32 rows, with the kernel table's
// best kernels. block: the attention block's plan; caches: the layers' KV
// caches (a decode), or null (a forward, causal if the config says so).
struct F32Steps {
  using Res = float;  // the residual stream
  using Act = float;  // a sub-layer's input and output
  using Layer = LayerWeightsF32;
  static constexpr bool kAttendInPlace = false;          // y has its own rows (the FFN's y_t too)
  static constexpr bool kLastFfnOutputRowsOnly = false;  // every row, as the float forward always did

  const TransformerConfig& c;
  const TransformerWeightsF32& w;
  const Plan& block;   // its parallel is the model plan's
  KvCacheF32* caches;  // [num_layers], or null

  // y [rows, E] = N(x) row by row (y may be x).
  void norm_rows(const NormWeightsF32& p, ConstMatF32 x, MatF32 y) const {
    const detail::NormRowF32Fn norm =
        c.norm == NormKind::kRmsNorm ? best(detail::kRmsNormF32) : best(detail::kLayerNormF32);
    const float* bias = has_norm_bias(c) ? p.bias : nullptr;
    for (int32_t i = 0; i < x.rows; ++i)
      norm(x.row(i), nullptr, x.cols, p.weight, bias, c.norm_eps, y.row(i));
  }

  // x [n, E] = token embedding (+ learned positions pos0 .. pos0 + n - 1) (+ type row 0).
  void embed(const int32_t* tokens, int32_t pos0, MatF32 x) const {
    const int32_t E = c.embed_dim;
    const float* positions =
        c.learned_positions ? w.position_embedding + static_cast<ptrdiff_t>(pos0) * E : nullptr;  // [n, E]
    const float* type_row = c.type_vocab_size > 0 ? w.type_embedding : nullptr;                   // [E]
    detail::embed_rows_f32_ref(w.token_embedding, tokens, x.rows, E, positions, type_row, x.data);
  }

  // h = N_k(x) (pre-norm), or x (post-norm): sub-layer k's input (1: attention, 2: FFN).
  void sublayer_in(const LayerWeightsF32& lw, int32_t k, ConstMatF32 x, MatF32 h) const {
    if (!c.pre_norm) return copy_rows(x, h);
    norm_rows(k == 1 ? lw.norm1 : lw.norm2, x, h);
  }

  // y [n, E] = layer l's attention block over h [n, E]: over the layer's
  // cache (a decode), or over h alone (a forward).
  Status attend(int32_t l, ConstMatF32 h, MatF32 y, Arena& arena) const {
    const WeightsF32& aw = w.layers[l].attention;
    if (caches != nullptr) return decode_f32(block, aw, &caches[l], h.data, h.rows, y.data, arena);
    Mask mask;
    mask.causal = c.causal;
    IoF32 io;
    io.query = io.key = io.value = h.data;
    io.output = y.data;
    return forward_f32(block, aw, mask, io, arena);
  }

  // x += y.
  void add_residual(const LayerWeightsF32&, MatF32 x, ConstMatF32 y) const { add_rows(x, y); }

  // u [rows, F] = h W1^T + b1; gated: g [rows, F] = h W3^T + b3.
  void ffn_up(const FfnWeightsF32& f, ConstMatF32 h, MatF32 u, MatF32 g) const {
    const detail::FfnPanelsF32 panels = detail::ffn_panels_f32(c, f);  // nulls unless f.packed
    const int32_t E = h.cols, F = u.cols;
    detail::linear_packed_f32(block.parallel, h, matrix(f.w1, F, E), panels.w1, c.ffn_bias ? f.b1 : nullptr,
                              u);
    if (c.gated_ffn)
      detail::linear_packed_f32(block.parallel, h, matrix(f.w3, F, E), panels.w3, c.ffn_bias ? f.b3 : nullptr,
                                g);
  }

  // u = act(u); gated: act(u) * g (u and g dense: one row list; no weights in f32).
  void ffn_act(const FfnWeightsF32&, MatF32 u, ConstMatF32 g) const {
    detail::ActivationF32Fn act = best(detail::kGeluF32);
    if (c.activation == Activation::kGeluTanh) act = best(detail::kGeluTanhF32);
    if (c.activation == Activation::kRelu) act = best(detail::kReluF32);
    if (c.activation == Activation::kSilu) act = best(detail::kSiluF32);
    act(u.data, c.gated_ffn ? g.data : nullptr, u.rows * u.cols);
  }

  // x += y, y [rows, E] = u W2^T + b2.
  void ffn_down(const FfnWeightsF32& f, ConstMatF32 u, MatF32 y, MatF32 x) const {
    const detail::FfnPanelsF32 panels = detail::ffn_panels_f32(c, f);
    detail::linear_packed_f32(block.parallel, u, matrix(f.w2, y.cols, u.cols), panels.w2,
                              c.ffn_bias ? f.b2 : nullptr, y);
    add_rows(x, y);
  }

  // h = N(x) with the final norm, or x.
  void final_norm(ConstMatF32 x, MatF32 h) const {
    if (!c.final_norm) return copy_rows(x, h);
    norm_rows(w.final_norm, x, h);
  }

  // out [m, vocab] = h W^T (W: the token embedding when tied).
  void lm_head(ConstMatF32 h, MatF32 out) const {
    const float* table = c.head == LmHead::kTied ? w.token_embedding : w.lm_head;  // [vocab, E]
    detail::linear_packed_f32(block.parallel, h, matrix(table, c.vocab_size, h.cols), nullptr, nullptr, out);
  }
};

// The n tokens at positions pos0 .. pos0 + n - 1 through the model
// (model/model_forward.h), the output rows `rows` into out, in the
// caller's arena (left as found). plan, weights and the arena were checked.
Status run(const TransformerPlan& plan, const TransformerWeightsF32& w, const Plan& block, KvCacheF32* caches,
           const int32_t* tokens, int32_t n, int32_t pos0, OutputRows rows, float* out, Arena& arena) {
  const F32Steps steps{plan.config, w, block, caches};
  const detail::NoObserver obs;
  const size_t mark = arena.mark();
  const Status st =
      detail::forward(steps, obs, tokens, n, pos0, detail::output_range(rows, n), plan.tile_rows, out, arena);
  arena.release(mark);
  return st;
}

}  // namespace

namespace detail {

Status check_layer_weights_f32(const TransformerConfig& c, const LayerWeightsF32& lw) {
  ATTN_TRY(check_weights_f32(c.attention(), lw.attention));
  ATTN_TRY(check_norm(c, lw.norm1));
  ATTN_TRY(check_norm(c, lw.norm2));
  const FfnWeightsF32& f = lw.ffn;
  if (f.w1 == nullptr || f.w2 == nullptr || (c.gated_ffn && f.w3 == nullptr)) return Status::kNullArgument;
  if (c.ffn_bias && (f.b1 == nullptr || f.b2 == nullptr || (c.gated_ffn && f.b3 == nullptr))) {
    return Status::kNullArgument;
  }
  return Status::kOk;
}

}  // namespace detail

Status transformer_forward_f32(const TransformerPlan& plan, const TransformerWeightsF32& weights,
                               const int32_t* tokens, int32_t n, OutputRows rows, float* out, Arena& arena) {
  ATTN_TRY(check_call(plan, weights, tokens, n, rows, out, arena));
  const TransformerConfig& c = plan.config;
  if (n > c.max_positions) return Status::kSequenceTooLong;
  // The attention block over the n tokens (valid: the planner checked max_tokens).
  Plan block;
  ATTN_TRY(plan_attention(c.attention(), DType::kF32, n, n, &block, plan.tile_rows));
  block.parallel = plan.parallel;
  return run(plan, weights, block, nullptr, tokens, n, 0, rows, out, arena);
}

Status transformer_state_init_f32(const TransformerPlan& plan, int32_t window, Arena& arena,
                                  TransformerStateF32* state) {
  if (state == nullptr) return Status::kNullArgument;
  *state = TransformerStateF32();
  ATTN_TRY(detail::check_transformer_plan(plan, DType::kF32));
  if (plan.capacity <= 0) return Status::kPlanMismatch;
  const TransformerConfig& c = plan.config;
  if (window < 0 || window > plan.capacity) return Status::kBadWindow;
  Plan block;  // the decode plan each layer's cache is made for
  ATTN_TRY(plan_decode(c.attention(), DType::kF32, plan.max_tokens, plan.capacity, &block, plan.tile_rows));
  const size_t mark = arena.mark();
  KvCacheF32* caches = nullptr;  // [num_layers]
  Status st = arena.alloc_array(static_cast<size_t>(c.num_layers), &caches);
  for (int32_t l = 0; l < c.num_layers && st == Status::kOk; ++l) {
    KvCacheF32* cache = new (&caches[l]) KvCacheF32();
    st = kv_cache_init_f32(block, window, arena, cache);
  }
  if (st != Status::kOk) {
    arena.release(mark);
    return st;
  }
  state->caches = caches;
  state->num_layers = c.num_layers;
  state->length = 0;
  return Status::kOk;
}

Status transformer_decode_f32(const TransformerPlan& plan, const TransformerWeightsF32& weights,
                              TransformerStateF32* state, const int32_t* tokens, int32_t n, OutputRows rows,
                              float* out, Arena& arena) {
  if (state == nullptr || state->caches == nullptr) return Status::kNullArgument;
  ATTN_TRY(check_call(plan, weights, tokens, n, rows, out, arena));
  const TransformerConfig& c = plan.config;
  if (plan.capacity <= 0 || state->num_layers != c.num_layers || state->length < 0)
    return Status::kPlanMismatch;
  // Every layer's cache: made for this plan, holding the same positions.
  const AttentionConfig a = c.attention();
  const int32_t window = state->caches[0].window;
  for (int32_t l = 0; l < c.num_layers; ++l) {
    const KvCacheF32& k = state->caches[l];
    if (k.k == nullptr || k.v == nullptr) return Status::kNullArgument;
    // start + length in 64 bits: a caller-edited start near INT32_MAX must not overflow.
    if (k.capacity != plan.capacity || k.config.kv_dim() != a.kv_dim() || k.window != window ||
        k.length < 0 || k.length > k.capacity || k.start < 0 ||
        int64_t{k.start} + k.length != int64_t{state->length}) {
      return Status::kPlanMismatch;
    }
  }
  if (static_cast<int64_t>(state->length) + n > c.max_positions) return Status::kSequenceTooLong;
  if (window == 0 && state->caches[0].length + n > plan.capacity) return Status::kCacheFull;
  Plan block;
  ATTN_TRY(plan_decode(a, DType::kF32, n, plan.capacity, &block, plan.tile_rows));
  block.parallel = plan.parallel;
  const Status st = run(plan, weights, block, state->caches, tokens, n, state->length, rows, out, arena);
  if (st == Status::kOk) state->length += n;
  return st;
}

}  // namespace attn
