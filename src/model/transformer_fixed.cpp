// transformer_fixed.cpp: whole models in integers only, s8 and s16
// (attn/transformer_fixed.h), one implementation over the activation type.
//
// Schedule of one call of n tokens (M = plan.max_tokens, T = plan.tile_rows):
//   x [n, E] int32 residual  = embeddings (+ their norm)
//   per layer:
//     a_in [n, E]  = N1(x) (pre-norm) or x rescaled (post-norm)     Act
//     a_out [n, E] = attention(a_in): forward_s8/_s16 (causal if the config
//                    says so), or decode_s8/_s16 over the layer's KV cache,
//                    written over a_in (the block reads each query tile
//                    before it writes that tile's output)
//     x += a_out rescaled; post-norm: x = N1(x)
//     per tile of T rows: a_in rows = N2(x) or x rescaled; h1 [T, F] = W1 a_in
//       (h3 = W3 a_in); h1 = act(h1) (gated: act(h1) * h3) in place;
//       x rows += W2 h1 (accumulators rescaled straight onto the residual
//       grid); post-norm: x = N2(x)
//   output rows: final norm / rescale, then the head's int32 logits (or the
//   int32 hidden state).
// Arena: x, a_in (= a_out), then the larger of the attention's scratch and
// the FFN tile (h1, h3): O(M E + T F), never O(M F).
#include "attn/transformer_fixed.h"

#include "attention/attend_fixed.h"
#include "attention/attention_fixed_common.h"
#include "kernels/kernel_table.h"
#include "kernels/kernels_model_fixed.h"
#include "model/transformer_fixed_common.h"

namespace attn {
namespace detail {

namespace {

template <typename Act>
struct ModelOps;

#if ATTN_WITH_S8
template <>
struct ModelOps<int8_t> {
  using Weights = TransformerWeightsS8;
  using Layer = LayerWeightsS8;
  using Ffn = FfnS8;
  using Head = ProjectionS8;
  using Cache = KvCacheS8;
  using State = TransformerStateS8;
  static constexpr DType kDType = DType::kS8;
  static constexpr int32_t kZpMin = -128, kZpMax = 127;
  static constexpr int32_t kProjectionMaxShift = 30;
  static constexpr int32_t kHeadMaxShift = 30;

  static void norm(ConstMatS32 x, NormKind k, const NormFixed& p, MatS8 y) { best(kNormS8)(x, k, p, y); }
  static void to_act(ConstMatS32 x, const RescaleFixed& r, MatS8 y) { best(kResidualToS8)(x, r, y); }
  static void add(MatS32 x, ConstMatS8 y, const RescaleFixed& r) { best(kResidualAddS8)(x, y, r); }
  static Status attention(const Plan& p, const WeightsS8& w, const Mask& m, const int8_t* x, int8_t* y,
                          Arena& a) {
    IoS8 io;
    io.query = x;
    io.key = x;
    io.value = x;
    io.output = y;
    return forward_s8(p, w, m, io, a);
  }
  static Status decode(const Plan& p, const WeightsS8& w, KvCacheS8* c, const int8_t* x, int32_t n, int8_t* y,
                       Arena& a) {
    return decode_s8(p, w, c, x, n, y, a);
  }
  static Status cache_init(const Plan& p, int32_t window, Arena& a, KvCacheS8* c) {
    return kv_cache_init_s8(p, window, a, c);
  }
  static LinearS8Params params(const ProjectionS8& p, int32_t zp) {
    return FixedOps<int8_t>::linear_params(p, zp);
  }
  // r [rows, E] += FFN(x [rows, E]) on the residual grid; h1, h3 [rows, F] scratch.
  static void ffn(const FfnS8& f, bool gated, ConstMatS8 x, MatS8 h1, MatS8 h3, MatS32 r) {
    const int32_t E = x.cols, F = h1.cols;
    best(kLinearS8)(x, matrix(f.w1.weight, F, E), f.w1.bias, params(f.w1, f.h1_zero_point), h1);
    if (gated) {
      best(kLinearS8)(x, matrix(f.w3.weight, F, E), f.w3.bias, params(f.w3, f.h3_zero_point), h3);
      best(kActGateS8)(h1, h3, f.gate_table, f.h3_zero_point, f.gate_multiplier, f.gate_shift,
                       f.g_zero_point);
    } else {
      best(kActTableS8)(h1, f.act_table);
    }
    best(kLinearResidualS8)(h1, matrix(f.w2.weight, E, F), f.w2.bias, f.w2.multiplier, f.w2.shift, r);
  }
  static void logits(ConstMatS8 x, const ProjectionS8& h, int32_t V, MatS32 y) {
    best(kLogitsS8)(x, matrix(h.weight, V, x.cols), h.bias, h.multiplier, h.shift, y);
  }
  static Status check_ffn(const FfnS8& f, bool gated, int32_t E, int32_t F) {
    const auto zp_ok = [](int32_t z) { return z >= kZpMin && z <= kZpMax; };
    if (f.w1.weight == nullptr || f.w2.weight == nullptr || f.w1.bias == nullptr || f.w2.bias == nullptr) {
      return Status::kNullArgument;
    }
    ATTN_TRY(check_requant(f.w1.multiplier, f.w1.shift, F, kProjectionMaxShift, f.w1.bias, E));
    ATTN_TRY(check_requant(f.w2.multiplier, f.w2.shift, E, kProjectionMaxShift, f.w2.bias, F));
    if (!zp_ok(f.h1_zero_point) || !zp_ok(f.g_zero_point)) {
      return Status::kBadQuantParams;
    }
    if (!gated) return f.act_table == nullptr ? Status::kNullArgument : Status::kOk;
    if (f.w3.weight == nullptr || f.w3.bias == nullptr || f.gate_table == nullptr)
      return Status::kNullArgument;
    ATTN_TRY(check_requant(f.w3.multiplier, f.w3.shift, F, kProjectionMaxShift, f.w3.bias, E));
    if (!zp_ok(f.h3_zero_point) || f.gate_multiplier < 0 || !shift_ok(f.gate_shift, 30)) {
      return Status::kBadQuantParams;
    }
    return Status::kOk;
  }
  static bool head_bias_ok(const ProjectionS8& h) { return h.bias != nullptr; }
};
#endif

#if ATTN_WITH_S16
template <>
struct ModelOps<int16_t> {
  using Weights = TransformerWeightsS16;
  using Layer = LayerWeightsS16;
  using Ffn = FfnS16;
  using Head = ProjectionS16;
  using Cache = KvCacheS16;
  using State = TransformerStateS16;
  static constexpr DType kDType = DType::kS16;
  static constexpr int32_t kZpMin = 0, kZpMax = 0;
  static constexpr int32_t kProjectionMaxShift = 14;
  static constexpr int32_t kHeadMaxShift = 14;

  static void norm(ConstMatS32 x, NormKind k, const NormFixed& p, MatS16 y) { best(kNormS16)(x, k, p, y); }
  static void to_act(ConstMatS32 x, const RescaleFixed& r, MatS16 y) { best(kResidualToS16)(x, r, y); }
  static void add(MatS32 x, ConstMatS16 y, const RescaleFixed& r) { best(kResidualAddS16)(x, y, r); }
  static Status attention(const Plan& p, const WeightsS16& w, const Mask& m, const int16_t* x, int16_t* y,
                          Arena& a) {
    IoS16 io;
    io.query = x;
    io.key = x;
    io.value = x;
    io.output = y;
    return forward_s16(p, w, m, io, a);
  }
  static Status decode(const Plan& p, const WeightsS16& w, KvCacheS16* c, const int16_t* x, int32_t n,
                       int16_t* y, Arena& a) {
    return decode_s16(p, w, c, x, n, y, a);
  }
  static Status cache_init(const Plan& p, int32_t window, Arena& a, KvCacheS16* c) {
    return kv_cache_init_s16(p, window, a, c);
  }
  static LinearS16Params params(const ProjectionS16& p) {
    LinearS16Params lp;
    lp.multiplier = p.multiplier;
    lp.shift = p.shift;
    return lp;
  }
  static void ffn(const FfnS16& f, bool gated, ConstMatS16 x, MatS16 h1, MatS16 h3, MatS32 r) {
    const int32_t E = x.cols, F = h1.cols;
    best(kLinearS16)(x, matrix(f.w1.weight, F, E), f.w1.bias, params(f.w1), h1);
    if (gated) {
      best(kLinearS16)(x, matrix(f.w3.weight, F, E), f.w3.bias, params(f.w3), h3);
      best(kActGateS16)(h1, h3, f.act_table, f.act_multiplier, f.act_shift);
    } else {
      best(kActTableS16)(h1, f.act_table, f.act_multiplier, f.act_shift);
    }
    best(kLinearResidualS16)(h1, matrix(f.w2.weight, E, F), f.w2.bias, f.w2.multiplier, f.w2.shift, r);
  }
  static void logits(ConstMatS16 x, const ProjectionS16& h, int32_t V, MatS32 y) {
    best(kLogitsS16)(x, matrix(h.weight, V, x.cols), h.bias, h.multiplier, h.shift, y);
  }
  static Status check_ffn(const FfnS16& f, bool gated, int32_t E, int32_t F) {
    if (f.w1.weight == nullptr || f.w2.weight == nullptr || f.act_table == nullptr)
      return Status::kNullArgument;
    ATTN_TRY(check_requant(f.w1.multiplier, f.w1.shift, F, kProjectionMaxShift, f.w1.bias, E));
    ATTN_TRY(check_requant(f.w2.multiplier, f.w2.shift, E, kProjectionMaxShift, f.w2.bias, F));
    if (f.act_multiplier < 0 || !shift_ok(f.act_shift, gated ? 14 : 30)) return Status::kBadQuantParams;
    if (!gated) return Status::kOk;
    if (f.w3.weight == nullptr) return Status::kNullArgument;
    return check_requant(f.w3.multiplier, f.w3.shift, F, kProjectionMaxShift, f.w3.bias, E);
  }
  static bool head_bias_ok(const ProjectionS16&) { return true; }
};
#endif

// In 64 bits: the sums below must not wrap a 32-bit size_t.
uint64_t bytes_of(int32_t rows, int32_t cols, size_t elem) {
  const uint64_t n = static_cast<uint64_t>(rows) * static_cast<uint64_t>(cols) * elem;
  return (n + (ATTN_ARENA_ALIGN - 1)) / ATTN_ARENA_ALIGN * ATTN_ARENA_ALIGN;
}

// ---- checks ---------------------------------------------------------------------

template <typename Act>
Status check_rescale(const RescaleFixed& r) {
  using Ops = ModelOps<Act>;
  if (r.multiplier < 0 || !shift_ok(r.shift, 30) || r.zero_point < Ops::kZpMin ||
      r.zero_point > Ops::kZpMax) {
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

template <typename Act>
ATTN_COLD_CODE Status check_model_weights(const TransformerConfig& c, const AttentionConfig& ac,
                                          const typename ModelOps<Act>::Weights& w, int32_t pos_end) {
  using Ops = ModelOps<Act>;
  const int32_t E = c.embed_dim, F = c.ffn_dim;
  if (w.layers == nullptr) return Status::kNullArgument;
  ATTN_TRY(check_embedding(w.token_embedding, c.vocab_size));
  if (c.learned_positions) ATTN_TRY(check_embedding(w.position_embedding, c.max_positions));
  if (c.type_vocab_size > 0 && w.type_embedding == nullptr) return Status::kNullArgument;
  if (c.embedding_norm) ATTN_TRY(check_norm(c, w.embedding_norm, 0, 0));
  const bool to_act_out = c.head != LmHead::kNone;
  if (c.final_norm) {
    ATTN_TRY(to_act_out ? check_norm(c, w.final_norm, Ops::kZpMin, Ops::kZpMax)
                        : check_norm(c, w.final_norm, 0, 0));
  } else if (to_act_out) {
    ATTN_TRY(check_rescale<Act>(w.head_in));
  }
  if (to_act_out) {
    if (w.head.weight == nullptr || !Ops::head_bias_ok(w.head)) return Status::kNullArgument;
    ATTN_TRY(
        check_requant(w.head.multiplier, w.head.shift, c.vocab_size, Ops::kHeadMaxShift, w.head.bias, E));
  }
  const AttentionConfig& rc = ac;
  for (int32_t l = 0; l < c.num_layers; ++l) {
    const typename Ops::Layer& L = w.layers[l];
    ATTN_TRY(check_weights(rc, L.attention));
    if (rope_enabled(rc)) {
      ATTN_TRY(check_rope_table(L.attention.rope));
      ATTN_TRY(check_rope_positions(L.attention.rope, 0, pos_end));
    }
    if (c.pre_norm) {
      ATTN_TRY(check_norm(c, L.norm1, Ops::kZpMin, Ops::kZpMax));
      ATTN_TRY(check_norm(c, L.norm2, Ops::kZpMin, Ops::kZpMax));
    } else {
      ATTN_TRY(check_norm(c, L.norm1, 0, 0));
      ATTN_TRY(check_norm(c, L.norm2, 0, 0));
      ATTN_TRY(check_rescale<Act>(L.attn_in));
      ATTN_TRY(check_rescale<Act>(L.ffn_in));
    }
    ATTN_TRY(check_rescale<Act>(L.attn_out));
    ATTN_TRY(Ops::check_ffn(L.ffn, c.gated_ffn, E, F));
  }
  return Status::kOk;
}

// ---- the forward ------------------------------------------------------------------

// x [n, E] = the embeddings of tokens at positions pos0 .. on the residual grid.
template <typename Weights>
void embed(const TransformerConfig& c, const Weights& w, const int32_t* tokens, int32_t n, int32_t pos0,
           MatS32 x) {
  const int32_t E = c.embed_dim;
  for (int32_t i = 0; i < n; ++i) {
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

template <typename Act>
Status run(const TransformerPlan& plan, const typename ModelOps<Act>::Weights& w,
           typename ModelOps<Act>::State* state, const int32_t* tokens, int32_t n, OutputRows rows,
           int32_t* out, Arena& arena, const ForwardObserver& observer) {
  using Ops = ModelOps<Act>;
  if (tokens == nullptr || out == nullptr) return Status::kNullArgument;
  ATTN_TRY(check_transformer_plan(plan, Ops::kDType));
  const TransformerConfig& c = plan.config;
  if (rows != OutputRows::kAll && rows != OutputRows::kLast) return Status::kBadQueryLength;
  if (n < 1) return Status::kBadQueryLength;
  if (n > plan.max_tokens) return Status::kSequenceTooLong;
  const int32_t pos0 = state != nullptr ? state->length : 0;
  if (static_cast<int64_t>(pos0) + n > c.max_positions) return Status::kSequenceTooLong;
  for (int32_t i = 0; i < n; ++i) {
    if (tokens[i] < 0 || tokens[i] >= c.vocab_size) return Status::kTokenOutOfRange;
  }
  const AttentionConfig ac = c.attention();
  Plan aplan;  // resolved block config (head_dim, kv heads)
  ATTN_TRY(plan_attention(ac, Ops::kDType, n, n, &aplan, plan.tile_rows));
  ATTN_TRY(check_model_weights<Act>(c, aplan.config, w, pos0 + n));
  Plan dplan;
  if (state != nullptr) {
    if (state->caches == nullptr || state->num_layers != c.num_layers) return Status::kNullArgument;
    ATTN_TRY(plan_decode(ac, Ops::kDType, plan.max_tokens, plan.capacity, &dplan, plan.tile_rows));
    const typename Ops::Cache& c0 = state->caches[0];
    if (c0.window == 0 && c0.length + n > c0.capacity) return Status::kCacheFull;
  }

  const int32_t E = c.embed_dim, F = c.ffn_dim, L = c.num_layers;
  const int32_t T = plan.tile_rows;
  // Everything the call carves fits (checked before anything is written):
  // x, a_in (= a_out), then the attention's scratch or the FFN tile in turn.
  if (arena.free_bytes() < plan.arena_bytes) return Status::kArenaTooSmall;
  const size_t mark = arena.mark();
  int32_t* xb = nullptr;
  Act *a_in = nullptr, *a_out = nullptr;
  const Status carved = [&] {
    ATTN_TRY(arena.alloc_array(static_cast<size_t>(n) * static_cast<size_t>(E), &xb));
    return arena.alloc_array(static_cast<size_t>(n) * static_cast<size_t>(E), &a_in);
  }();
  // The block writes its output over its input: the forward and the decode
  // read each tile's query rows (and, for the decode, each chunk's K/V rows)
  // before they write that tile's output rows, and later tiles read only
  // later rows (tests: "The integer block may write its output over its input").
  a_out = a_in;
  if (carved != Status::kOk) {
    arena.release(mark);
    return carved;
  }
  const MatS32 x = matrix(xb, n, E);
  const Matrix<Act> xin = matrix(a_in, n, E);
  const Matrix<Act> xout = matrix(a_out, n, E);
  const auto fail = [&](Status s) {
    arena.release(mark);
    return s;
  };
  const size_t inner = arena.mark();  // the attention's scratch, then the FFN tile
  Act *h1b = nullptr, *h3b = nullptr;

  embed(c, w, tokens, n, pos0, x);
  if (c.embedding_norm) best(kNormS32)(x, c.norm, w.embedding_norm, x);
  if (observer.fn != nullptr) observer.fn(observer.context, 0, xb, n, E);

  Mask mask;
  mask.causal = c.causal;
  const int32_t first_out = rows == OutputRows::kLast ? n - 1 : 0;
  for (int32_t l = 0; l < L; ++l) {
    const typename Ops::Layer& ly = w.layers[l];
    if (c.pre_norm) {
      Ops::norm(x, c.norm, ly.norm1, xin);
    } else {
      Ops::to_act(x, ly.attn_in, xin);
    }
    const Status s = state != nullptr
                         ? Ops::decode(dplan, ly.attention, &state->caches[l], a_in, n, a_out, arena)
                         : Ops::attention(aplan, ly.attention, mask, a_in, a_out, arena);
    if (s != Status::kOk) return fail(s);
    Ops::add(x, xout, ly.attn_out);
    if (!c.pre_norm) best(kNormS32)(x, c.norm, ly.norm1, x);
    if (observer.fn != nullptr) observer.fn(observer.context, 2 * l + 1, xb, n, E);
    // FFN, T rows at a time (the last layer: only the rows the output needs).
    const int32_t r_begin = l == L - 1 && observer.fn == nullptr ? first_out : 0;
    const Status carved_ffn = [&] {
      ATTN_TRY(arena.alloc_array(static_cast<size_t>(T) * static_cast<size_t>(F), &h1b));
      return c.gated_ffn ? arena.alloc_array(static_cast<size_t>(T) * static_cast<size_t>(F), &h3b)
                         : Status::kOk;
    }();
    if (carved_ffn != Status::kOk) return fail(carved_ffn);
    for (int32_t r0 = r_begin; r0 < n; r0 += T) {
      const int32_t rr = T < n - r0 ? T : n - r0;
      const MatS32 xt = x.rows_slice(r0, rr);
      const Matrix<Act> it = xin.rows_slice(r0, rr);
      if (c.pre_norm) {
        Ops::norm(xt, c.norm, ly.norm2, it);
      } else {
        Ops::to_act(xt, ly.ffn_in, it);
      }
      Ops::ffn(ly.ffn, c.gated_ffn, it, matrix(h1b, rr, F), matrix(c.gated_ffn ? h3b : h1b, rr, F), xt);
      if (!c.pre_norm) best(kNormS32)(xt, c.norm, ly.norm2, xt);
    }
    arena.release(inner);
    if (observer.fn != nullptr) observer.fn(observer.context, 2 * l + 2, xb, n, E);
  }

  // Output rows [first_out, n).
  const int32_t m = n - first_out;
  const MatS32 xo = x.rows_slice(first_out, m);
  if (c.head == LmHead::kNone) {
    const MatS32 y = matrix(out, m, E);
    if (c.final_norm) {
      best(kNormS32)(xo, c.norm, w.final_norm, y);
    } else {
      for (int32_t i = 0; i < m; ++i)
        for (int32_t e = 0; e < E; ++e) y.row(i)[e] = xo.row(i)[e];
    }
  } else {
    const Matrix<Act> hin = xin.rows_slice(first_out, m);
    if (c.final_norm) {
      Ops::norm(xo, c.norm, w.final_norm, hin);
    } else {
      Ops::to_act(xo, w.head_in, hin);
    }
    Ops::logits(hin, w.head, c.vocab_size, matrix(out, m, c.vocab_size));
  }
  if (state != nullptr) state->length += n;
  arena.release(mark);
  return Status::kOk;
}

template <typename Act>
Status state_init(const TransformerPlan& plan, int32_t window, Arena& arena,
                  typename ModelOps<Act>::State* state) {
  using Ops = ModelOps<Act>;
  if (state == nullptr) return Status::kNullArgument;
  *state = typename Ops::State();
  ATTN_TRY(check_transformer_plan(plan, Ops::kDType));
  if (plan.capacity <= 0) return Status::kPlanMismatch;
  const int32_t L = plan.config.num_layers;
  Plan dplan;
  ATTN_TRY(plan_decode(plan.config.attention(), Ops::kDType, plan.max_tokens, plan.capacity, &dplan,
                       plan.tile_rows));
  if (window < 0 || window > plan.capacity) return Status::kBadWindow;
  if (arena.free_bytes() < plan.state_bytes) return Status::kArenaTooSmall;
  const size_t mark = arena.mark();
  typename Ops::Cache* caches = nullptr;
  Status s = arena.alloc_array(static_cast<size_t>(L), &caches);
  for (int32_t l = 0; s == Status::kOk && l < L; ++l) {
    caches[l] = typename Ops::Cache();
    s = Ops::cache_init(dplan, window, arena, &caches[l]);
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

namespace detail {

ATTN_COLD_CODE Status transformer_fixed_bytes(const TransformerPlan& plan, size_t* arena_bytes,
                                              size_t* state_bytes) {
  const TransformerConfig& c = plan.config;
  const DType dtype = plan.dtype;
#if !ATTN_WITH_S8
  if (dtype == DType::kS8) return Status::kBadDtype;
#endif
#if !ATTN_WITH_S16
  if (dtype == DType::kS16) return Status::kBadDtype;
#endif
  const int32_t M = plan.max_tokens, T = plan.tile_rows;
  const AttentionConfig ac = c.attention();
  Plan p;
  ATTN_TRY(plan_attention(ac, dtype, M, M, &p, T));
  // Sums in 64 bits; a total above SIZE_MAX (a 32-bit target) is 0: kSizeOverflow in plan_transformer.
  const size_t e = dtype_bytes(dtype);
  uint64_t phase = p.arena_bytes;  // the attention block's scratch
  if (plan.capacity > 0) {
    Plan d;
    ATTN_TRY(plan_decode(ac, dtype, M, plan.capacity, &d, T));
    phase = d.arena_bytes > phase ? d.arena_bytes : phase;
  }
  const uint64_t ffn = bytes_of(T, c.ffn_dim, e) * (c.gated_ffn ? 2 : 1);
  phase = ffn > phase ? ffn : phase;
  const uint64_t arena = bytes_of(M, c.embed_dim, 4) + bytes_of(M, c.embed_dim, e) + phase;
  *arena_bytes = arena <= SIZE_MAX ? static_cast<size_t>(arena) : 0;
  if (plan.capacity > 0) {
    const uint64_t layers = static_cast<uint64_t>(c.num_layers);
    const uint64_t cache_struct = dtype == DType::kS8 ? sizeof(KvCacheS8) : sizeof(KvCacheS16);
    const uint64_t per_layer = kv_cache_arena_bytes(p.config, dtype, plan.capacity);  // 0: past SIZE_MAX
    const uint64_t state =
        (cache_struct * layers + (ATTN_ARENA_ALIGN - 1)) / ATTN_ARENA_ALIGN * ATTN_ARENA_ALIGN +
        layers * per_layer;
    *state_bytes = per_layer != 0 && state <= SIZE_MAX ? static_cast<size_t>(state) : 0;
  }
  return Status::kOk;
}

}  // namespace detail

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
