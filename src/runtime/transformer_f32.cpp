// transformer_f32.cpp: the float32 whole-model forward and decode
// (attn/transformer.h).
//
// One call, top to bottom (n tokens, E = embed_dim, F = ffn_dim, T = tile rows):
//
//   x = embed(tokens)                                  x [n, E]
//   for each layer:
//     pre-norm:  h = N1(x); y = Attn(h); x += y        h, y [n, E]
//     post-norm: y = Attn(x); x = N1(x + y)
//     for each tile of T rows of x:                    (scratch O(T F), not O(n F))
//       pre-norm:  h_t = N2(x_t); y_t = FFN(h_t); x_t += y_t
//       post-norm: y_t = FFN(x_t); x_t = N2(x_t + y_t)
//   final norm; out = x or x W^T (the LM head)         out [n or 1, E or vocab]
//
// Attention is the block of attn/attention.h: forward_f32 (causal mask when
// the config says so) for a forward, decode_f32 over the layer's KV cache for
// a decode; the rest of a layer is written once, for both.
#include <cstring>
#include <new>

#include "attn/decode.h"
#include "attn/transformer.h"
#include "internal/attend_f32.h"
#include "internal/kernel_table.h"
#include "internal/transformer_f32.h"

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
  if (rows != OutputRows::kAll && rows != OutputRows::kLast) return Status::kBadShape;
  for (int32_t i = 0; i < n; ++i) {
    if (tokens[i] < 0 || tokens[i] >= c.vocab_size) return Status::kTokenOutOfRange;
  }
  // Every buffer below fits in plan.arena_bytes: no carve can fail half-way.
  if (arena.free_bytes() < plan.arena_bytes) return Status::kArenaTooSmall;
  return Status::kOk;
}

// The norm of the config over one row: y = N(x + r) (r may be null).
struct Norm {
  detail::NormRowF32Fn fn;
  const float* weight;
  const float* bias;
  float eps;
  int32_t E;
  void operator()(const float* x, const float* r, float* y) const { fn(x, r, E, weight, bias, eps, y); }
};

Norm norm_of(const TransformerConfig& c, const NormWeightsF32& w) {
  const detail::NormRowF32Fn fn =
      c.norm == NormKind::kRmsNorm ? best(detail::kRmsNormF32) : best(detail::kLayerNormF32);
  return Norm{fn, w.weight, has_norm_bias(c) ? w.bias : nullptr, c.norm_eps, c.embed_dim};
}

detail::ActivationF32Fn activation_of(Activation a) {
  switch (a) {
    case Activation::kGeluTanh:
      return best(detail::kGeluTanhF32);
    case Activation::kRelu:
      return best(detail::kReluF32);
    case Activation::kSilu:
      return best(detail::kSiluF32);
    default:
      return best(detail::kGeluF32);
  }
}

// The buffers of one call, [n, E] each, carved first.
struct Hidden {
  float* x;  // [n, E] hidden state
  float* h;  // [n, E] normed input of a sub-layer (pre-norm), FFN tile input
  float* y;  // [n, E] output of a sub-layer
};

Status carve_hidden(Arena& arena, int32_t n, int32_t E, Hidden* b) {
  const size_t ne = static_cast<size_t>(n) * static_cast<size_t>(E);
  ATTN_TRY(arena.alloc_array(ne, &b->x));
  ATTN_TRY(arena.alloc_array(ne, &b->h));
  return arena.alloc_array(ne, &b->y);
}

// x [n, E] = token embedding (+ learned positions pos0 .. pos0 + n - 1) (+ type row 0), normed if configured.
void embed(const TransformerConfig& c, const TransformerWeightsF32& w, const int32_t* tokens, int32_t n,
           int32_t pos0, float* x) {
  const int32_t E = c.embed_dim;
  const float* positions =
      c.learned_positions ? w.position_embedding + static_cast<ptrdiff_t>(pos0) * E : nullptr;  // [n, E]
  const float* type_row = c.type_vocab_size > 0 ? w.type_embedding : nullptr;                   // [E]
  detail::embed_rows_f32_ref(w.token_embedding, tokens, n, E, positions, type_row, x);
  if (c.embedding_norm) {
    const Norm norm = norm_of(c, w.embedding_norm);
    for (int32_t i = 0; i < n; ++i)
      norm(x + static_cast<ptrdiff_t>(i) * E, nullptr, x + static_cast<ptrdiff_t>(i) * E);
  }
}

// One layer over x [n, E]. attend(in, out) runs the attention block on
// in [n, E] into out [n, E] (forward_f32 or decode_f32); it cannot fail here
// (plan, weights and arena were checked), so its status is passed through.
template <class Attend>
Status layer(const TransformerConfig& c, int32_t tile_rows, const LayerWeightsF32& lw, const Hidden& b,
             int32_t n, Arena& arena, Attend attend) {
  const int32_t E = c.embed_dim;
  const int32_t F = c.ffn_dim;
  const ptrdiff_t e = E;
  const Norm n1 = norm_of(c, lw.norm1);
  const Norm n2 = norm_of(c, lw.norm2);

  // Attention sub-layer.
  if (c.pre_norm) {
    for (int32_t i = 0; i < n; ++i) n1(b.x + i * e, nullptr, b.h + i * e);  // h = N1(x)
    ATTN_TRY(attend(b.h, b.y));                                             // y = Attn(h)
    for (ptrdiff_t k = 0; k < n * e; ++k) b.x[k] += b.y[k];                 // x += y
  } else {
    ATTN_TRY(attend(b.x, b.y));                                                 // y = Attn(x)
    for (int32_t i = 0; i < n; ++i) n1(b.x + i * e, b.y + i * e, b.x + i * e);  // x = N1(x + y)
  }

  // FFN sub-layer, T rows at a time.
  const size_t mark = arena.mark();
  const size_t tf = static_cast<size_t>(tile_rows) * static_cast<size_t>(F);
  float* u = nullptr;  // [T, F]  W1 n + b1, then act(.) (* g)
  float* g = nullptr;  // [T, F]  W3 n + b3 (gated)
  Status st = arena.alloc_array(tf, &u);
  if (st == Status::kOk && c.gated_ffn) st = arena.alloc_array(tf, &g);
  if (st != Status::kOk) {
    arena.release(mark);
    return st;
  }
  const FfnWeightsF32& f = lw.ffn;
  const detail::ActivationF32Fn act = activation_of(c.activation);
  const detail::FfnPanelsF32 panels = detail::ffn_panels_f32(c, f);  // nulls unless f.packed
  for (int32_t t0 = 0; t0 < n; t0 += tile_rows) {
    const int32_t rows = tile_rows < n - t0 ? tile_rows : n - t0;
    float* xt = b.x + t0 * e;  // [rows, E]
    float* yt = b.y + t0 * e;  // [rows, E]
    const float* in = xt;      // [rows, E]: the FFN's input
    if (c.pre_norm) {
      float* ht = b.h + t0 * e;
      for (int32_t i = 0; i < rows; ++i) n2(xt + i * e, nullptr, ht + i * e);  // h_t = N2(x_t)
      in = ht;
    }
    detail::linear_packed_f32(matrix(in, rows, E), matrix(f.w1, F, E), panels.w1, c.ffn_bias ? f.b1 : nullptr,
                              matrix(u, rows, F));  // u = h_t W1^T + b1
    if (c.gated_ffn) {
      detail::linear_packed_f32(matrix(in, rows, E), matrix(f.w3, F, E), panels.w3,
                                c.ffn_bias ? f.b3 : nullptr, matrix(g, rows, F));  // g = h_t W3^T + b3
    }
    act(u, g, rows * F);  // u = act(u) (* g): one row list, the tile is dense
    detail::linear_packed_f32(matrix<const float>(u, rows, F), matrix(f.w2, E, F), panels.w2,
                              c.ffn_bias ? f.b2 : nullptr, matrix(yt, rows, E));  // y_t = u W2^T + b2
    if (c.pre_norm) {
      for (ptrdiff_t k = 0; k < rows * e; ++k) xt[k] += yt[k];  // x_t += y_t
    } else {
      for (int32_t i = 0; i < rows; ++i) n2(xt + i * e, yt + i * e, xt + i * e);  // x_t = N2(x_t + y_t)
    }
  }
  arena.release(mark);
  return Status::kOk;
}

// out = the final norm and head of x rows [first, n): [n - first, output_dim].
void head(const TransformerConfig& c, const TransformerWeightsF32& w, float* x, int32_t first, int32_t n,
          float* out) {
  const int32_t E = c.embed_dim;
  float* xs = x + static_cast<ptrdiff_t>(first) * E;  // [m, E]
  const int32_t m = n - first;
  if (c.final_norm) {
    const Norm norm = norm_of(c, w.final_norm);
    for (int32_t i = 0; i < m; ++i)
      norm(xs + static_cast<ptrdiff_t>(i) * E, nullptr, xs + static_cast<ptrdiff_t>(i) * E);
  }
  if (c.head == LmHead::kNone) {
    std::memcpy(out, xs, static_cast<size_t>(m) * static_cast<size_t>(E) * sizeof(float));
    return;
  }
  const float* table = c.head == LmHead::kTied ? w.token_embedding : w.lm_head;  // [vocab, E]
  best(detail::kLinearF32)(matrix<const float>(xs, m, E), matrix(table, c.vocab_size, E), nullptr,
                           matrix(out, m, c.vocab_size));  // logits [m, vocab]
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
  Mask mask;
  mask.causal = c.causal;

  const size_t mark = arena.mark();
  Hidden b{};
  Status st = carve_hidden(arena, n, c.embed_dim, &b);
  if (st == Status::kOk) {
    embed(c, weights, tokens, n, 0, b.x);
    for (int32_t l = 0; l < c.num_layers && st == Status::kOk; ++l) {
      const WeightsF32& aw = weights.layers[l].attention;
      st = layer(c, plan.tile_rows, weights.layers[l], b, n, arena, [&](const float* in, float* y) {
        IoF32 io;
        io.query = io.key = io.value = in;
        io.output = y;
        return forward_f32(block, aw, mask, io, arena);
      });
    }
  }
  if (st == Status::kOk) head(c, weights, b.x, rows == OutputRows::kLast ? n - 1 : 0, n, out);
  arena.release(mark);
  return st;
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

  const size_t mark = arena.mark();
  Hidden b{};
  Status st = carve_hidden(arena, n, c.embed_dim, &b);
  if (st == Status::kOk) {
    embed(c, weights, tokens, n, state->length, b.x);
    for (int32_t l = 0; l < c.num_layers && st == Status::kOk; ++l) {
      const WeightsF32& aw = weights.layers[l].attention;
      KvCacheF32* cache = &state->caches[l];
      st = layer(c, plan.tile_rows, weights.layers[l], b, n, arena,
                 [&](const float* in, float* y) { return decode_f32(block, aw, cache, in, n, y, arena); });
    }
  }
  if (st == Status::kOk) {
    head(c, weights, b.x, rows == OutputRows::kLast ? n - 1 : 0, n, out);
    state->length += n;
  }
  arena.release(mark);
  return st;
}

}  // namespace attn
