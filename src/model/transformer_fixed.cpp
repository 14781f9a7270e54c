// transformer_fixed.cpp: whole models in integers only, s8 and s16
// (attn/transformer_fixed.h), one implementation over the activation type.
//
// The forward is model/model_forward.h's (the same one as the f32 forward and
// the converter's calibration forward); the steps are FixedSteps below, over
// helpers overloaded for s8 and s16.
// The residual stream x is int32 on one grid per model; a sub-layer's input h
// is the activation type (N(x), or x rescaled in post-norm); the attention
// block (forward_s8/_s16, or decode_s8/_s16 over the layer's KV cache) writes
// its output over h; the FFN's W2 accumulates straight onto x; the output
// rows get the final norm (or a rescale), then the head's int32 logits (or
// the int32 hidden state).
// Arena: x, h (= y), then the larger of the attention's scratch and the FFN
// tile (u, g): O(M E + T F), never O(M F).
#include "attn/transformer_fixed.h"

#include "attention/attend_fixed.h"
#include "attention/attention_fixed_common.h"
#include "kernels/kernel_table.h"
#include "kernels/kernels_model_fixed.h"
#include "kernels/linear_split.h"
#include "model/model_forward.h"
#include "model/transformer_fixed_common.h"

#if ATTN_WITH_S8 || ATTN_WITH_S16  // an f32-only build (ATTN_DTYPES=f32) compiles this file empty

namespace attn {
namespace detail {

namespace {

// What differs between s8 and s16 besides the steps: the types, the
// activations' zero point range, the projections' largest shift.
template <typename Act>
struct ModelTypes;

#if ATTN_WITH_S8
template <>
struct ModelTypes<int8_t> {
  using Weights = TransformerWeightsS8;
  using Layer = LayerWeightsS8;
  using Cache = KvCacheS8;
  using State = TransformerStateS8;
  static constexpr DType kDType = DType::kS8;
  static constexpr int32_t kZpMin = -128, kZpMax = 127;
  static constexpr int32_t kProjectionMaxShift = 30;
  static constexpr int32_t kHeadMaxShift = 30;
};
#endif

#if ATTN_WITH_S16
template <>
struct ModelTypes<int16_t> {
  using Weights = TransformerWeightsS16;
  using Layer = LayerWeightsS16;
  using Cache = KvCacheS16;
  using State = TransformerStateS16;
  static constexpr DType kDType = DType::kS16;
  static constexpr int32_t kZpMin = 0, kZpMax = 0;
  static constexpr int32_t kProjectionMaxShift = 14;
  static constexpr int32_t kHeadMaxShift = 14;
};
#endif

// ---- checks ---------------------------------------------------------------------

template <typename Act>
Status check_rescale(const RescaleFixed& r) {
  using Types = ModelTypes<Act>;
  if (r.multiplier < 0 || !shift_ok(r.shift, 30) || r.zero_point < Types::kZpMin ||
      r.zero_point > Types::kZpMax) {
    return Status::kBadQuantParams;
  }
  return Status::kOk;
}

constexpr int32_t kNormBiasLimit = int32_t{1} << 29;
constexpr int64_t kNormEpsLimit = int64_t{1} << 62;

// out_zp_lo/hi: the output's zero point range (int32 and s16 outputs: 0).
Status check_norm(const TransformerConfig& c, const NormFixed& p, int32_t zp_lo, int32_t zp_hi) {
  if (p.weight == nullptr) return Status::kNullArgument;
  if (c.norm == NormKind::kLayerNorm && c.norm_bias && p.bias == nullptr) return Status::kNullArgument;
  if (p.shift < -31 || p.shift > 30 || p.eps < 0 || p.eps >= kNormEpsLimit || p.output_zero_point < zp_lo ||
      p.output_zero_point > zp_hi) {
    return Status::kBadQuantParams;
  }
  if (p.bias != nullptr) {
    bool ok = true;
    for (int32_t i = 0; i < c.embed_dim; ++i) ok &= p.bias[i] > -kNormBiasLimit && p.bias[i] < kNormBiasLimit;
    if (!ok) return Status::kBadQuantParams;
  }
  return Status::kOk;
}

Status check_embedding(const EmbeddingFixed& e, int32_t rows) {
  if (e.table == nullptr) return Status::kNullArgument;
  return check_requant<int32_t>(e.multiplier, e.shift, rows, 30, nullptr, 0);
}

#if ATTN_WITH_S8
Status check_ffn(const FfnS8& f, bool gated, int32_t E, int32_t F) {
  using Types = ModelTypes<int8_t>;
  const auto zp_ok = [](int32_t z) { return z >= Types::kZpMin && z <= Types::kZpMax; };
  ATTN_TRY(check_projection_weights(f.w1, E));
  ATTN_TRY(check_projection_weights(f.w2, F));
  if (f.w1.bias == nullptr || f.w2.bias == nullptr) return Status::kNullArgument;
  ATTN_TRY(check_requant(f.w1.multiplier, f.w1.shift, F, Types::kProjectionMaxShift, f.w1.bias, E));
  ATTN_TRY(check_requant(f.w2.multiplier, f.w2.shift, E, Types::kProjectionMaxShift, f.w2.bias, F));
  if (!zp_ok(f.h1_zero_point) || !zp_ok(f.g_zero_point)) {
    return Status::kBadQuantParams;
  }
  if (!gated) return f.act_table == nullptr ? Status::kNullArgument : Status::kOk;
  ATTN_TRY(check_projection_weights(f.w3, E));
  if (f.w3.bias == nullptr || f.gate_table == nullptr) return Status::kNullArgument;
  ATTN_TRY(check_requant(f.w3.multiplier, f.w3.shift, F, Types::kProjectionMaxShift, f.w3.bias, E));
  if (!zp_ok(f.h3_zero_point) || f.gate_multiplier < 0 || !shift_ok(f.gate_shift, 30)) {
    return Status::kBadQuantParams;
  }
  return Status::kOk;
}
bool head_bias_ok(const ProjectionS8& h) { return h.bias != nullptr; }
#endif

#if ATTN_WITH_S16
Status check_ffn(const FfnS16& f, bool gated, int32_t E, int32_t F) {
  using Types = ModelTypes<int16_t>;
  ATTN_TRY(check_projection_weights(f.w1, E));
  ATTN_TRY(check_projection_weights(f.w2, F));
  if (f.act_table == nullptr) return Status::kNullArgument;
  ATTN_TRY(check_requant(f.w1.multiplier, f.w1.shift, F, Types::kProjectionMaxShift, f.w1.bias, E));
  ATTN_TRY(check_requant(f.w2.multiplier, f.w2.shift, E, Types::kProjectionMaxShift, f.w2.bias, F));
  if (f.act_multiplier < 0 || !shift_ok(f.act_shift, gated ? 14 : 30)) return Status::kBadQuantParams;
  if (!gated) return Status::kOk;
  ATTN_TRY(check_projection_weights(f.w3, E));
  return check_requant(f.w3.multiplier, f.w3.shift, F, Types::kProjectionMaxShift, f.w3.bias, E);
}
bool head_bias_ok(const ProjectionS16&) { return true; }
#endif

template <typename Act>
ATTN_COLD_CODE Status check_model_weights(const TransformerConfig& c, const AttentionConfig& ac,
                                          const typename ModelTypes<Act>::Weights& w, int32_t pos_end) {
  using Types = ModelTypes<Act>;
  const int32_t E = c.embed_dim, F = c.ffn_dim;
  if (w.layers == nullptr) return Status::kNullArgument;
  ATTN_TRY(check_embedding(w.token_embedding, c.vocab_size));
  if (c.learned_positions) ATTN_TRY(check_embedding(w.position_embedding, c.max_positions));
  if (c.type_vocab_size > 0 && w.type_embedding == nullptr) return Status::kNullArgument;
  if (c.embedding_norm) ATTN_TRY(check_norm(c, w.embedding_norm, 0, 0));
  const bool to_act_out = c.head != LmHead::kNone;
  if (c.final_norm) {
    ATTN_TRY(to_act_out ? check_norm(c, w.final_norm, Types::kZpMin, Types::kZpMax)
                        : check_norm(c, w.final_norm, 0, 0));
  } else if (to_act_out) {
    ATTN_TRY(check_rescale<Act>(w.head_in));
  }
  if (to_act_out) {
    ATTN_TRY(check_projection_weights(w.head, E));
    if (!head_bias_ok(w.head)) return Status::kNullArgument;
    ATTN_TRY(
        check_requant(w.head.multiplier, w.head.shift, c.vocab_size, Types::kHeadMaxShift, w.head.bias, E));
  }
  const AttentionConfig& rc = ac;
  for (int32_t l = 0; l < c.num_layers; ++l) {
    const typename Types::Layer& L = w.layers[l];
    ATTN_TRY(check_weights(rc, L.attention));
    if (rope_enabled(rc)) {
      ATTN_TRY(check_rope_table(L.attention.rope));
      ATTN_TRY(check_rope_positions(L.attention.rope, 0, pos_end));
    }
    if (c.pre_norm) {
      ATTN_TRY(check_norm(c, L.norm1, Types::kZpMin, Types::kZpMax));
      ATTN_TRY(check_norm(c, L.norm2, Types::kZpMin, Types::kZpMax));
    } else {
      ATTN_TRY(check_norm(c, L.norm1, 0, 0));
      ATTN_TRY(check_norm(c, L.norm2, 0, 0));
      ATTN_TRY(check_rescale<Act>(L.attn_in));
      ATTN_TRY(check_rescale<Act>(L.ffn_in));
    }
    ATTN_TRY(check_rescale<Act>(L.attn_out));
    ATTN_TRY(check_ffn(L.ffn, c.gated_ffn, E, F));
  }
  return Status::kOk;
}

// ---- the steps, in s8 and s16 (model/model_forward.h names them) ----------------------
// Overloaded per activation type: the residual x is int32 on the model's
// grid, a sub-layer's input h and the FFN's u, g are the activation type.

// x [n, E] = the embeddings of tokens at positions pos0 .. on the residual grid.
template <typename Weights>
void embed(const TransformerConfig& c, const Weights& w, const int32_t* tokens, int32_t pos0, MatS32 x) {
  const int32_t E = c.embed_dim;
  for (int32_t i = 0; i < x.rows; ++i) {
    int32_t* xr = x.row(i);
    const int32_t t = tokens[i];
    const int8_t* tr = w.token_embedding.table + static_cast<ptrdiff_t>(t) * E;
    const int32_t tm = w.token_embedding.multiplier[t], ts = w.token_embedding.shift[t];
    for (int32_t e = 0; e < E; ++e) xr[e] = static_cast<int32_t>(rescale_q31(tr[e], tm, ts));
    if (c.learned_positions) {
      const int32_t p = pos0 + i;
      const int8_t* pr = w.position_embedding.table + static_cast<ptrdiff_t>(p) * E;
      const int32_t pm = w.position_embedding.multiplier[p], ps = w.position_embedding.shift[p];
      for (int32_t e = 0; e < E; ++e) xr[e] = saturate_s32(int64_t{xr[e]} + rescale_q31(pr[e], pm, ps));
    }
    if (c.type_vocab_size > 0) {
      for (int32_t e = 0; e < E; ++e) xr[e] = saturate_s32(int64_t{xr[e]} + w.type_embedding[e]);
    }
  }
}

// y = N(x) row by row, onto the residual grid (y may be x) or the activation's.
void norm_rows(const TransformerConfig& c, const NormFixed& p, ConstMatS32 x, MatS32 y) {
  best(kNormS32)(x, c.norm, p, y);
}
#if ATTN_WITH_S8
void norm_rows(const TransformerConfig& c, const NormFixed& p, ConstMatS32 x, MatS8 y) {
  best(kNormS8)(x, c.norm, p, y);
}
void rescale_rows(ConstMatS32 x, const RescaleFixed& r, MatS8 y) { best(kResidualToS8)(x, r, y); }
#endif
#if ATTN_WITH_S16
void norm_rows(const TransformerConfig& c, const NormFixed& p, ConstMatS32 x, MatS16 y) {
  best(kNormS16)(x, c.norm, p, y);
}
void rescale_rows(ConstMatS32 x, const RescaleFixed& r, MatS16 y) { best(kResidualToS16)(x, r, y); }
#endif

// y [n, E] = the attention block over h [n, E]: over the layer's cache (a
// decode), or over h alone (a forward, causal if the config says so).
#if ATTN_WITH_S8
Status attend_block(const Plan& block, const WeightsS8& w, const Mask& mask, KvCacheS8* cache, ConstMatS8 h,
                    MatS8 y, Arena& arena) {
  if (cache != nullptr) return decode_s8(block, w, cache, h.data, h.rows, y.data, arena);
  IoS8 io;
  io.query = io.key = io.value = h.data;
  io.output = y.data;
  return forward_s8(block, w, mask, io, arena);
}
#endif
#if ATTN_WITH_S16
Status attend_block(const Plan& block, const WeightsS16& w, const Mask& mask, KvCacheS16* cache,
                    ConstMatS16 h, MatS16 y, Arena& arena) {
  if (cache != nullptr) return decode_s16(block, w, cache, h.data, h.rows, y.data, arena);
  IoS16 io;
  io.query = io.key = io.value = h.data;
  io.output = y.data;
  return forward_s16(block, w, mask, io, arena);
}
#endif

// x += y rescaled onto the residual grid by r.
#if ATTN_WITH_S8
void add_residual(MatS32 x, ConstMatS8 y, const RescaleFixed& r) { best(kResidualAddS8)(x, y, r); }
#endif
#if ATTN_WITH_S16
void add_residual(MatS32 x, ConstMatS16 y, const RescaleFixed& r) { best(kResidualAddS16)(x, y, r); }
#endif

// u [rows, F] = h W1^T + b1; gated: g [rows, F] = h W3^T + b3 (requantized).
#if ATTN_WITH_S8
void ffn_up(const TransformerConfig& c, const ParallelFor& par, const FfnS8& f, ConstMatS8 h, MatS8 u,
            MatS8 g) {
  project_split(par, h, f.w1, FixedOps<int8_t>::linear_params(f.w1, f.h1_zero_point), u);
  if (c.gated_ffn) project_split(par, h, f.w3, FixedOps<int8_t>::linear_params(f.w3, f.h3_zero_point), g);
}
#endif
#if ATTN_WITH_S16
LinearS16Params linear_params_s16(const ProjectionS16& p) {
  LinearS16Params lp;
  lp.multiplier = p.multiplier;
  lp.shift = p.shift;
  return lp;
}
void ffn_up(const TransformerConfig& c, const ParallelFor& par, const FfnS16& f, ConstMatS16 h, MatS16 u,
            MatS16 g) {
  project_split(par, h, f.w1, f.w1.bias, linear_params_s16(f.w1), u);
  if (c.gated_ffn) project_split(par, h, f.w3, f.w3.bias, linear_params_s16(f.w3), g);
}
#endif

// u = act(u); gated: act(u) * g (tables the converter builds).
#if ATTN_WITH_S8
void ffn_act(const TransformerConfig& c, const FfnS8& f, MatS8 u, ConstMatS8 g) {
  if (c.gated_ffn) {
    best(kActGateS8)(u, g, f.gate_table, f.h3_zero_point, f.gate_multiplier, f.gate_shift, f.g_zero_point);
  } else {
    best(kActTableS8)(u, f.act_table);
  }
}
#endif
#if ATTN_WITH_S16
void ffn_act(const TransformerConfig& c, const FfnS16& f, MatS16 u, ConstMatS16 g) {
  if (c.gated_ffn) {
    best(kActGateS16)(u, g, f.act_table, f.act_multiplier, f.act_shift);
  } else {
    best(kActTableS16)(u, f.act_table, f.act_multiplier, f.act_shift);
  }
}
#endif

// x += u W2^T + b2: the down projection's accumulators rescaled straight onto
// the residual grid (the integer forward's ffn_down is also its add_residual).
#if ATTN_WITH_S8
void ffn_down(const ParallelFor& par, const FfnS8& f, ConstMatS8 u, MatS32 x) {
  residual_split(par, u, f.w2, x);
}
#endif
#if ATTN_WITH_S16
void ffn_down(const ParallelFor& par, const FfnS16& f, ConstMatS16 u, MatS32 x) {
  residual_split(par, u, f.w2, x);
}
#endif

// The output without a head: h = N(x) with the final norm, or x (int32).
template <typename Weights>
void final_norm(const TransformerConfig& c, const Weights& w, ConstMatS32 x, MatS32 h) {
  if (c.final_norm) {
    norm_rows(c, w.final_norm, x, h);
  } else {
    for (int32_t i = 0; i < x.rows; ++i)
      for (int32_t e = 0; e < x.cols; ++e) h.row(i)[e] = x.row(i)[e];
  }
}
// The head's input: h = N(x) with the final norm, or x rescaled (activation type).
template <typename Weights, typename Act>
void final_norm(const TransformerConfig& c, const Weights& w, ConstMatS32 x, Matrix<Act> h) {
  if (c.final_norm) {
    norm_rows(c, w.final_norm, x, h);
  } else {
    rescale_rows(x, w.head_in, h);
  }
}

// out [m, vocab] = h W^T: int32 logits with the head's scale.
#if ATTN_WITH_S8
void lm_head(const TransformerConfig& c, const ParallelFor& par, const TransformerWeightsS8& w, ConstMatS8 h,
             MatS32 out) {
  (void)c;
  logits_split(par, h, w.head, out);
}
#endif
#if ATTN_WITH_S16
void lm_head(const TransformerConfig& c, const ParallelFor& par, const TransformerWeightsS16& w,
             ConstMatS16 h, MatS32 out) {
  (void)c;
  logits_split(par, h, w.head, out);
}
#endif

// The integer forward's observer: the converter's per-stage report
// (ForwardObserver, a call per stage, never per row); every other hook empty.
struct StageObserver : NoObserver {
  const ForwardObserver& report;
  explicit StageObserver(const ForwardObserver& r) : report(r) {}
  void stage(int32_t s, ConstMatS32 x) const {
    if (report.fn != nullptr) report.fn(report.context, s, x.data, x.rows, x.cols);
  }
  bool every_row() const { return report.fn != nullptr; }  // the report reads every row of every stage
};

// ---- one call ------------------------------------------------------------------------

// The checks of one call, before anything is written; block: the attention
// block's plan (the decode's with a state).
template <typename Act>
Status check_call(const TransformerPlan& plan, const typename ModelTypes<Act>::Weights& w,
                  const typename ModelTypes<Act>::State* state, const int32_t* tokens, int32_t n,
                  OutputRows rows, const int32_t* out, const Arena& arena, Plan* block) {
  using Types = ModelTypes<Act>;
  if (tokens == nullptr || out == nullptr) return Status::kNullArgument;
  ATTN_TRY(check_transformer_plan(plan, Types::kDType));
  const TransformerConfig& c = plan.config;
  if (rows != OutputRows::kAll && rows != OutputRows::kLast && rows != OutputRows::kFirst)
    return Status::kBadQueryLength;
  if (n < 1) return Status::kBadQueryLength;
  if (n > plan.max_tokens) return Status::kSequenceTooLong;
  const int32_t pos0 = state != nullptr ? state->length : 0;
  if (static_cast<int64_t>(pos0) + n > c.max_positions) return Status::kSequenceTooLong;
  for (int32_t i = 0; i < n; ++i) {
    if (tokens[i] < 0 || tokens[i] >= c.vocab_size) return Status::kTokenOutOfRange;
  }
  const AttentionConfig ac = c.attention();
  ATTN_TRY(plan_attention(ac, Types::kDType, n, n, block, plan.tile_rows));
  ATTN_TRY(check_model_weights<Act>(c, block->config, w, pos0 + n));  // the resolved block config
  if (state != nullptr) {
    if (state->caches == nullptr || state->num_layers != c.num_layers) return Status::kNullArgument;
    ATTN_TRY(plan_decode(ac, Types::kDType, plan.max_tokens, plan.capacity, block, plan.tile_rows));
    const typename Types::Cache& c0 = state->caches[0];
    if (c0.window == 0 && c0.length + n > c0.capacity) return Status::kCacheFull;
  }
  // Everything forward() carves fits: x, h (= y), then the attention's
  // scratch or the FFN tile in turn.
  if (arena.free_bytes() < plan.arena_bytes) return Status::kArenaTooSmall;
  return Status::kOk;
}

// The steps of detail::forward() (model/model_forward.h) in Act: the helpers
// above, with the model's config and weights. block: the attention block's
// plan; caches: the layers' KV caches (a decode), or null (a forward, causal
// if the config says so).
template <typename A>
struct FixedSteps {
  using Res = int32_t;  // the residual stream, on the model's grid
  using Act = A;        // a sub-layer's input, and the attention's output
  using Layer = typename ModelTypes<A>::Layer;
  // y over h: the forward and the decode read each tile's query rows (and,
  // for the decode, each chunk's K/V rows) before they write that tile's
  // output rows, and later tiles read only later rows (tests: "The integer
  // block may write its output over its input").
  static constexpr bool kAttendInPlace = true;
  static constexpr bool kLastFfnOutputRowsOnly = true;  // an output row needs no other row's FFN

  const TransformerConfig& c;
  const typename ModelTypes<A>::Weights& w;
  const Plan& block;                      // its parallel is the model plan's
  typename ModelTypes<A>::Cache* caches;  // [num_layers], or null

  template <typename Y>
  void norm_rows(const NormFixed& p, ConstMatS32 x, Matrix<Y> y) const {
    detail::norm_rows(c, p, x, y);
  }
  void embed(const int32_t* tokens, int32_t pos0, MatS32 x) const { detail::embed(c, w, tokens, pos0, x); }
  // h = N_k(x) (pre-norm), or x rescaled to the activation grid (post-norm):
  // sub-layer k's input (1: attention, 2: FFN).
  void sublayer_in(const Layer& lw, int32_t k, ConstMatS32 x, Matrix<A> h) const {
    if (c.pre_norm) return norm_rows(k == 1 ? lw.norm1 : lw.norm2, x, h);
    rescale_rows(x, k == 1 ? lw.attn_in : lw.ffn_in, h);
  }
  Status attend(int32_t l, Matrix<const A> h, Matrix<A> y, Arena& arena) const {
    Mask mask;
    mask.causal = c.causal;
    return attend_block(block, w.layers[l].attention, mask, caches != nullptr ? &caches[l] : nullptr, h, y,
                        arena);
  }
  void add_residual(const Layer& lw, MatS32 x, Matrix<const A> y) const {
    detail::add_residual(x, y, lw.attn_out);
  }
  template <typename Ffn>
  void ffn_up(const Ffn& f, Matrix<const A> h, Matrix<A> u, Matrix<A> g) const {
    detail::ffn_up(c, block.parallel, f, h, u, g);
  }
  template <typename Ffn>
  void ffn_act(const Ffn& f, Matrix<A> u, Matrix<const A> g) const {
    detail::ffn_act(c, f, u, g);
  }
  // x += u W2^T + b2, straight onto the residual grid (no y).
  template <typename Ffn>
  void ffn_down(const Ffn& f, Matrix<const A> u, Matrix<A>, MatS32 x) const {
    detail::ffn_down(block.parallel, f, u, x);
  }
  template <typename H>
  void final_norm(ConstMatS32 x, Matrix<H> h) const {
    detail::final_norm(c, w, x, h);
  }
  void lm_head(Matrix<const A> h, MatS32 out) const { detail::lm_head(c, block.parallel, w, h, out); }
};

// One forward (state null) or decode step, checked, in the caller's arena.
template <typename Act>
Status run(const TransformerPlan& plan, const typename ModelTypes<Act>::Weights& w,
           typename ModelTypes<Act>::State* state, const int32_t* tokens, int32_t n, OutputRows rows,
           int32_t* out, Arena& arena, const ForwardObserver& observer) {
  Plan block;
  ATTN_TRY(check_call<Act>(plan, w, state, tokens, n, rows, out, arena, &block));
  block.parallel = plan.parallel;
  const FixedSteps<Act> steps{plan.config, w, block, state != nullptr ? state->caches : nullptr};
  const StageObserver obs(observer);
  const size_t mark = arena.mark();
  const Status st = forward(steps, obs, tokens, n, state != nullptr ? state->length : 0,
                            output_range(rows, n), plan.tile_rows, out, arena);
  arena.release(mark);
  if (st == Status::kOk && state != nullptr) state->length += n;
  return st;
}

#if ATTN_WITH_S8
Status kv_cache_init(const Plan& p, int32_t window, Arena& a, KvCacheS8* c) {
  return kv_cache_init_s8(p, window, a, c);
}
#endif
#if ATTN_WITH_S16
Status kv_cache_init(const Plan& p, int32_t window, Arena& a, KvCacheS16* c) {
  return kv_cache_init_s16(p, window, a, c);
}
#endif

template <typename Act>
Status state_init(const TransformerPlan& plan, int32_t window, Arena& arena,
                  typename ModelTypes<Act>::State* state) {
  using Types = ModelTypes<Act>;
  if (state == nullptr) return Status::kNullArgument;
  *state = typename Types::State();
  ATTN_TRY(check_transformer_plan(plan, Types::kDType));
  if (plan.capacity <= 0) return Status::kPlanMismatch;
  const int32_t L = plan.config.num_layers;
  Plan dplan;
  ATTN_TRY(plan_decode(plan.config.attention(), Types::kDType, plan.max_tokens, plan.capacity, &dplan,
                       plan.tile_rows));
  if (window < 0 || window > plan.capacity) return Status::kBadWindow;
  if (arena.free_bytes() < plan.state_bytes) return Status::kArenaTooSmall;
  const size_t mark = arena.mark();
  typename Types::Cache* caches = nullptr;
  Status s = arena.alloc_array(static_cast<size_t>(L), &caches);
  for (int32_t l = 0; s == Status::kOk && l < L; ++l) {
    caches[l] = typename Types::Cache();
    s = kv_cache_init(dplan, window, arena, &caches[l]);
  }
  if (s != Status::kOk) {
    arena.release(mark);
    return s;
  }
  state->caches = caches;
  state->num_layers = L;
  state->length = 0;
  return Status::kOk;
}

template <typename State>
Status state_reset(State* state) {
  if (state == nullptr || state->caches == nullptr) return Status::kNullArgument;
  for (int32_t l = 0; l < state->num_layers; ++l) ATTN_TRY(kv_cache_reset(&state->caches[l]));
  state->length = 0;
  return Status::kOk;
}

}  // namespace

#if ATTN_WITH_S8
Status transformer_forward_observed(const TransformerPlan& plan, const TransformerWeightsS8& w,
                                    const int32_t* tokens, int32_t n, OutputRows rows, int32_t* out,
                                    Arena& arena, const ForwardObserver& observer) {
  return run<int8_t>(plan, w, nullptr, tokens, n, rows, out, arena, observer);
}
#endif
#if ATTN_WITH_S16
Status transformer_forward_observed(const TransformerPlan& plan, const TransformerWeightsS16& w,
                                    const int32_t* tokens, int32_t n, OutputRows rows, int32_t* out,
                                    Arena& arena, const ForwardObserver& observer) {
  return run<int16_t>(plan, w, nullptr, tokens, n, rows, out, arena, observer);
}
#endif

}  // namespace detail

// ---- planning ------------------------------------------------------------------------

Status plan_transformer_fixed(const TransformerConfig& config, DType dtype, int32_t max_tokens,
                              int32_t capacity, TransformerPlan* out, int32_t tile_rows) {
  if (out != nullptr && dtype != DType::kS8 && dtype != DType::kS16) {
    *out = TransformerPlan();
    return Status::kBadDtype;
  }
  return plan_transformer(config, dtype, max_tokens, capacity, out, tile_rows);
}

#if ATTN_WITH_S8
Status transformer_forward_s8(const TransformerPlan& plan, const TransformerWeightsS8& w,
                              const int32_t* tokens, int32_t n, OutputRows rows, int32_t* out, Arena& arena) {
  return detail::run<int8_t>(plan, w, nullptr, tokens, n, rows, out, arena, detail::ForwardObserver());
}
Status transformer_state_init_s8(const TransformerPlan& plan, int32_t window, Arena& arena,
                                 TransformerStateS8* state) {
  return detail::state_init<int8_t>(plan, window, arena, state);
}
Status transformer_state_reset(TransformerStateS8* state) { return detail::state_reset(state); }
Status transformer_decode_s8(const TransformerPlan& plan, const TransformerWeightsS8& w,
                             TransformerStateS8* state, const int32_t* tokens, int32_t n, OutputRows rows,
                             int32_t* out, Arena& arena) {
  if (state == nullptr) return Status::kNullArgument;
  return detail::run<int8_t>(plan, w, state, tokens, n, rows, out, arena, detail::ForwardObserver());
}
#endif
#if ATTN_WITH_S16
Status transformer_forward_s16(const TransformerPlan& plan, const TransformerWeightsS16& w,
                               const int32_t* tokens, int32_t n, OutputRows rows, int32_t* out,
                               Arena& arena) {
  return detail::run<int16_t>(plan, w, nullptr, tokens, n, rows, out, arena, detail::ForwardObserver());
}
Status transformer_state_init_s16(const TransformerPlan& plan, int32_t window, Arena& arena,
                                  TransformerStateS16* state) {
  return detail::state_init<int16_t>(plan, window, arena, state);
}
Status transformer_state_reset(TransformerStateS16* state) { return detail::state_reset(state); }
Status transformer_decode_s16(const TransformerPlan& plan, const TransformerWeightsS16& w,
                              TransformerStateS16* state, const int32_t* tokens, int32_t n, OutputRows rows,
                              int32_t* out, Arena& arena) {
  if (state == nullptr) return Status::kNullArgument;
  return detail::run<int16_t>(plan, w, state, tokens, n, rows, out, arena, detail::ForwardObserver());
}
#endif

}  // namespace attn
#endif  // ATTN_WITH_S8 || ATTN_WITH_S16
