// transformer_c.cpp: the whole-model C entry points of attn/attn.h (config,
// plan, a model bound to an arena, the sampler) over attn/transformer.h,
// attn/transformer_fixed.h and attn/sampler.h.
//
// One file for every dtype: each dtype's parts sit under its ATTN_WITH_*, so
// a build without f32 (whose file-name rule drops *_f32.cpp) keeps this one.
// Nothing here does float arithmetic: the float outputs of integer models are
// converted in transformer_float_c.cpp, which integer firmware need not link.
//
// A bound model (attn_transformer) is a magic word and a pointer to its Core,
// the first thing carved from the caller's arena; then the dtype's
// TransformerWeights*, the layer table, the decoding state (its struct, then
// the KV caches), and the scratch of one call (Core::arena, given back by
// every call). Split in two (attn_transformer_init_split), the decoding state
// (struct and KV caches) is all of `state` and everything else is in
// `scratch`, the call's scratch last.
#include <cstring>
#include <new>
#include <type_traits>

#include "attn/attn.h"
#include "attn/model.h"
#include "attn/model_bytes.h"
#include "attn/sampler.h"
#include "attn/transformer.h"
#include "attn/transformer_fixed.h"
#include "capi/handles.h"
#include "capi/mirrors.h"
#include "capi/transformer_c.h"

namespace attn {
namespace capi {
namespace {

// The enum codes and the config's fields are checked in capi/mirrors.h.

// ---- handles (capi/handles.h) ------------------------------------------------

constexpr uint32_t kPlanMagic = 0x4E4C5054u;    // "TPLN"
constexpr uint32_t kHandleMagic = 0x524D4654u;  // "TFMR"
constexpr uint32_t kCoreMagic = 0x524F4354u;    // "TCOR"
static_assert(fits_handle<TransformerPlan, attn_transformer_plan>(),
              "grow or align attn_transformer_plan's storage in attn/attn.h");
static_assert(fits_handle<Model, attn_model>(), "attn_model's storage, as attn_c.cpp checks it");

// ---- config ------------------------------------------------------------------

// A loaded model file's config and dtype (kNotAModel for a block file).
Status model_config(const attn_model* model, Model* m, TransformerConfig* c, DType* dtype) {
  ATTN_TRY(fetch(model, kModelMagic, m));
  ATTN_TRY(m->transformer_config(c));
  format::ModelRecord rec;
  ATTN_TRY(m->model_record(&rec));
  *dtype = static_cast<DType>(rec.dtype);
  return Status::kOk;
}

// A loaded model file's plan for max_tokens and capacity (and the Model, for its weights).
Status model_plan(const attn_model* model, int32_t max_tokens, int32_t capacity, Model* m,
                  TransformerPlan* p) {
  TransformerConfig c;
  DType dtype = DType::kF32;
  ATTN_TRY(model_config(model, m, &c, &dtype));
  return plan_transformer(c, dtype, max_tokens, capacity, p);
}

// ---- the dtypes ----------------------------------------------------------------

// The C++ types and functions of one dtype's whole model, named once per
// dtype below (the function pointers are template arguments: direct calls).
template <DType D>
struct ModelApi;

// The scale of an integer model's int32 outputs (an f32 model's is not read).
template <class W>
float output_scale_of(const W& w) {
  return w.output_scale;
}
#if ATTN_WITH_F32
float output_scale_of(const TransformerWeightsF32&) { return 1.0f; }  // not read: f32 outputs are floats
#endif

template <
    class W, class L, class S, class O, Status (Model::*FromModel)(L*, int32_t, W*) const,
    Status (*StateInit)(const TransformerPlan&, int32_t, Arena&, S*),
    Status (*Forward)(const TransformerPlan&, const W&, const int32_t*, int32_t, OutputRows, O*, Arena&),
    Status (*Decode)(const TransformerPlan&, const W&, S*, const int32_t*, int32_t, OutputRows, O*, Arena&)>
struct ModelApiOf {
  using Weights = W;
  using Layer = L;
  using State = S;
  using Out = O;
  static Status from_model(const Model& m, Layer* l, int32_t n, Weights* w) {
    return (m.*FromModel)(l, n, w);
  }
  static Status state_init(const TransformerPlan& p, int32_t window, Arena& a, State* s) {
    return StateInit(p, window, a, s);
  }
  static Status forward(const TransformerPlan& p, const Weights& w, const int32_t* t, int32_t n, OutputRows r,
                        Out* out, Arena& a) {
    return Forward(p, w, t, n, r, out, a);
  }
  static Status decode(const TransformerPlan& p, const Weights& w, State* s, const int32_t* t, int32_t n,
                       OutputRows r, Out* out, Arena& a) {
    return Decode(p, w, s, t, n, r, out, a);
  }
  static float output_scale(const Weights& w) { return output_scale_of(w); }
};

// Each dtype's ModelApi, from its names: D the DType's and the C++ types'
// suffix (TransformerWeightsS8, ...), d the functions' (transformer_forward_s8,
// Model::transformer_weights_s8, ...), O the output's type.
#define ATTN_MODEL_API(D, d, O)                                                                             \
  template <>                                                                                               \
  struct ModelApi<DType::k##D> : ModelApiOf<TransformerWeights##D, LayerWeights##D, TransformerState##D, O, \
                                            &Model::transformer_weights_##d, transformer_state_init_##d,    \
                                            transformer_forward_##d, transformer_decode_##d> {};
#if ATTN_WITH_F32
ATTN_MODEL_API(F32, f32, float)
#endif
#if ATTN_WITH_S8
ATTN_MODEL_API(S8, s8, int32_t)
#endif
#if ATTN_WITH_S16
ATTN_MODEL_API(S16, s16, int32_t)
#endif
#undef ATTN_MODEL_API

template <DType D>
struct Tag {
  using Api = ModelApi<D>;
  static constexpr DType kDtype = D;
};

// f(Tag<D>()) for the dtype, kBadDtype for one this build leaves out.
template <class F>
Status dispatch(DType dtype, F f) {
  switch (dtype) {
#if ATTN_WITH_F32
    case DType::kF32:
      return f(Tag<DType::kF32>());
#endif
#if ATTN_WITH_S8
    case DType::kS8:
      return f(Tag<DType::kS8>());
#endif
#if ATTN_WITH_S16
    case DType::kS16:
      return f(Tag<DType::kS16>());
#endif
    default:
      return Status::kBadDtype;
  }
}

// ---- the bound model -----------------------------------------------------------

// The first thing in a bound model's arena.
struct Core {
  uint32_t magic = 0;
  TransformerPlan plan;
  void* weights = nullptr;  // ModelApi<plan.dtype>::Weights
  void* state = nullptr;    // ModelApi<plan.dtype>::State; null without capacity
  Arena arena;              // the rest of the caller's arena: one call's scratch
};
static_assert(fits_handle<Core*, attn_transformer>(),
              "grow or align attn_transformer's storage in attn/attn.h");

// This target's handle layout for dtype D (attn/model_bytes.h): what
// handle_bytes() below sizes, and `attn emit-c` from the written-out table.
template <DType D>
constexpr handle::HandleLayout this_layout() {
  using Api = ModelApi<D>;
  const uint64_t kv = D == DType::kF32  ? sizeof(KvCacheF32)
                      : D == DType::kS8 ? sizeof(KvCacheS8)
                                        : sizeof(KvCacheS16);
  return {sizeof(Core), sizeof(typename Api::Weights), sizeof(typename Api::Layer),
          sizeof(typename Api::State), kv};
}

// On 32-bit Arm and on LP64 targets the written-out table must be this
// target's (emit-c's sizes are exact there); elsewhere emit-c's header refuses.
template <DType D>
constexpr bool layout_written_out() {
  constexpr handle::HandleLayout a = this_layout<D>(), b = handle::handle_layout(D, sizeof(void*));
  return a.core == b.core && a.weights == b.weights && a.layer == b.layer && a.state == b.state &&
         a.kv_cache == b.kv_cache;
}
#if ATTN_HANDLE_LAYOUT_KNOWN
#define ATTN_LAYOUT_CHECK(D)                       \
  static_assert(layout_written_out<DType::k##D>(), \
                "a handle struct changed: update attn/model_bytes.h (attn emit-c sizes buffers from it)");
#if ATTN_WITH_F32
ATTN_LAYOUT_CHECK(F32)
#endif
#if ATTN_WITH_S8
ATTN_LAYOUT_CHECK(S8)
#endif
#if ATTN_WITH_S16
ATTN_LAYOUT_CHECK(S16)
#endif
#undef ATTN_LAYOUT_CHECK
#endif

// The two buffers of attn_transformer_init_split for `plan` (attn/model_bytes.h):
// `scratch` the handle's bookkeeping (Core, weights, layer table) and one
// call's scratch (plan.arena_bytes); `state` the decoding state, its struct
// and the KV caches (plan.state_bytes), 0 without capacity. One buffer takes
// their sum.
Status split_bytes(const TransformerPlan& plan, size_t* state, size_t* scratch) {
  *state = *scratch = 0;
  return dispatch(plan.dtype, [&](auto tag) {
    const handle::HandleLayout l = this_layout<decltype(tag)::kDtype>();
    const uint64_t s = plan.capacity > 0 ? handle::align_up(l.state) + plan.state_bytes : 0;
    const uint64_t a = handle::handle_bytes(l, plan.config.num_layers) + plan.arena_bytes;
    if (s > SIZE_MAX || a > SIZE_MAX) return Status::kSizeOverflow;
    *state = static_cast<size_t>(s);
    *scratch = static_cast<size_t>(a);
    return Status::kOk;
  });
}

// Every byte init carves for `plan` from one buffer.
Status total_bytes(const TransformerPlan& plan, size_t* bytes) {
  *bytes = 0;
  size_t state = 0, scratch = 0;
  ATTN_TRY(split_bytes(plan, &state, &scratch));
  if (state > SIZE_MAX - scratch) return Status::kSizeOverflow;
  *bytes = state + scratch;
  return Status::kOk;
}

template <class T>
Status carve(Arena& arena, size_t count, T** out) {
  ATTN_TRY(arena.alloc_array(count, out));
  for (size_t i = 0; i < count; ++i) new (*out + i) T();
  return Status::kOk;
}

// The caller's memory. `main` holds the handle's bookkeeping first and one
// call's scratch last; in one buffer (attn_transformer_init) the decoding
// state (its struct, the KV caches) sits between them, split
// (attn_transformer_init_split) it is all of `caches` (not used without
// capacity: may be null).
struct Buffers {
  void* main = nullptr;
  size_t main_bytes = 0;
  bool split = false;
  void* caches = nullptr;
  size_t caches_bytes = 0;
};

// Checks the window and the buffers against `plan` (nothing written), then
// carves the Core, the weights, the layer table [num_layers] and the state;
// fill(tag, weights, layers) sets the weights (its errors undo nothing: the handle
// is stored only on success).
template <class Fill>
attn_status bind(attn_transformer* handle, const TransformerPlan& plan, int32_t window, const Buffers& b,
                 Fill fill) {
  if (window < 0 || window > plan.capacity) return to_c(Status::kBadWindow);
  size_t state_need = 0, main_need = 0;
  ATTN_TRY_C(split_bytes(plan, &state_need, &main_need));
  if (!b.split) {  // one buffer: the state between the bookkeeping and the call scratch
    if (state_need > SIZE_MAX - main_need) return to_c(Status::kSizeOverflow);
    main_need += state_need;
  }
  const bool own_caches = b.split && plan.capacity > 0;
  Arena arena;   // the bookkeeping, (one buffer: the caches,) the call scratch
  Arena caches;  // split: the KV caches
  ATTN_TRY_C(arena.init(b.main, b.main_bytes));
  if (own_caches) ATTN_TRY_C(caches.init(b.caches, b.caches_bytes));
  if (b.main_bytes < main_need || (own_caches && b.caches_bytes < state_need))
    return to_c(Status::kArenaTooSmall);
  return to_c(dispatch(plan.dtype, [&](auto tag) {
    using Api = typename decltype(tag)::Api;
    Core* core = nullptr;
    typename Api::Weights* w = nullptr;
    typename Api::Layer* layers = nullptr;
    ATTN_TRY(carve(arena, 1, &core));
    ATTN_TRY(carve(arena, 1, &w));
    ATTN_TRY(carve(arena, static_cast<size_t>(plan.config.num_layers), &layers));
    ATTN_TRY(fill(tag, w, layers));
    core->plan = plan;
    core->weights = w;
    if (plan.capacity > 0) {
      Arena& kept = own_caches ? caches : arena;
      typename Api::State* s = nullptr;
      ATTN_TRY(carve(kept, 1, &s));
      ATTN_TRY(Api::state_init(plan, window, kept, s));
      core->state = s;
    }
    if (arena.free_bytes() < plan.arena_bytes) return Status::kArenaTooSmall;
    core->arena = arena;  // the rest: one call's scratch
    core->magic = kCoreMagic;
    store(handle, kHandleMagic, core);
    return Status::kOk;
  }));
}

// bind() with the weights of a model file, read in place.
attn_status bind_model(attn_transformer* handle, const Model& m, const TransformerPlan& p, int32_t window,
                       const Buffers& b) {
  return bind(handle, p, window, b, [&](auto tag, auto* w, auto* layers) {
    using Api = typename decltype(tag)::Api;
    return Api::from_model(m, layers, p.config.num_layers, w);
  });
}

Status fetch_core(const attn_transformer* handle, Core** core) {
  ATTN_TRY(fetch(handle, kHandleMagic, core));
  if (*core == nullptr || (*core)->magic != kCoreMagic) return Status::kBadHandle;
  return Status::kOk;
}

#if ATTN_WITH_F32
// The C layer into the C++ one (no packed panels).
LayerWeightsF32 layer_to_cpp(const attn_layer_weights_f32& c) {
  LayerWeightsF32 l;
  copy_weights_f32(&l.attention, c.attention);
  copy_norm_f32(&l.norm1, c.norm1);
  copy_norm_f32(&l.norm2, c.norm2);
  copy_ffn_f32(&l.ffn, c.ffn);
  return l;
}

bool norm_ok(const TransformerConfig& c, const attn_norm_weights_f32& n) {
  return n.weight != nullptr && (c.norm != NormKind::kLayerNorm || !c.norm_bias || n.bias != nullptr);
}

// Every pointer the config needs (kNullArgument), before the arena is touched.
Status check_weights(const TransformerConfig& c, const attn_transformer_weights_f32& w) {
  if (w.token_embedding == nullptr || w.layers == nullptr) return Status::kNullArgument;
  if (c.learned_positions && w.position_embedding == nullptr) return Status::kNullArgument;
  if (c.type_vocab_size > 0 && w.type_embedding == nullptr) return Status::kNullArgument;
  if (c.embedding_norm && !norm_ok(c, w.embedding_norm)) return Status::kNullArgument;
  if (c.final_norm && !norm_ok(c, w.final_norm)) return Status::kNullArgument;
  if (c.head == LmHead::kUntied && w.lm_head == nullptr) return Status::kNullArgument;
  for (int32_t l = 0; l < c.num_layers; ++l) {
    const attn_layer_weights_f32& L = w.layers[l];
    const attn_weights_f32& a = L.attention;
    if (a.wq == nullptr || a.wk == nullptr || a.wv == nullptr || a.wo == nullptr)
      return Status::kNullArgument;
    if (c.attention_bias && (a.bq == nullptr || a.bk == nullptr || a.bv == nullptr || a.bo == nullptr)) {
      return Status::kNullArgument;
    }
    if (!norm_ok(c, L.norm1) || !norm_ok(c, L.norm2)) return Status::kNullArgument;
    const attn_ffn_weights_f32& f = L.ffn;
    if (f.w1 == nullptr || f.w2 == nullptr || (c.gated_ffn && f.w3 == nullptr)) return Status::kNullArgument;
    if (c.ffn_bias && (f.b1 == nullptr || f.b2 == nullptr || (c.gated_ffn && f.b3 == nullptr))) {
      return Status::kNullArgument;
    }
  }
  return Status::kOk;
}
#endif

}  // namespace

Status transformer_call(const attn_transformer* handle, bool decode, const int32_t* tokens, int32_t n,
                        int rows, void* out, bool float_out, float* out_scale, TransformerCall* call) {
  *call = TransformerCall();
  if (out_scale != nullptr) std::memset(out_scale, 0, sizeof *out_scale);
  Core* core = nullptr;
  ATTN_TRY(fetch_core(handle, &core));
  if (decode && core->state == nullptr) return Status::kPlanMismatch;
  if (rows != ATTN_ROWS_ALL && rows != ATTN_ROWS_LAST && rows != ATTN_ROWS_FIRST) return Status::kBadShape;
  const auto out_rows = static_cast<OutputRows>(rows);  // the same values (capi/mirrors.h)
  const TransformerPlan& plan = core->plan;
  return dispatch(plan.dtype, [&](auto tag) {
    using Api = typename decltype(tag)::Api;
    using Out = typename Api::Out;
    constexpr bool kFloat = std::is_same<Out, float>::value;
    if (kFloat && !float_out) return Status::kBadDtype;  // an f32 model has no integer outputs
    const auto& w = *static_cast<const typename Api::Weights*>(core->weights);
    // The caller's float buffer holds the integer outputs until converted.
    Out* o = static_cast<Out*>(out);
    const Status s = decode ? Api::decode(plan, w, static_cast<typename Api::State*>(core->state), tokens, n,
                                          out_rows, o, core->arena)
                            : Api::forward(plan, w, tokens, n, out_rows, o, core->arena);
    if (s != Status::kOk) return s;
    if (!kFloat) {
      const float scale = Api::output_scale(w);
      if (out_scale != nullptr) std::memcpy(out_scale, &scale, sizeof scale);
      call->convert = float_out;
      call->count = static_cast<size_t>(out_rows == OutputRows::kAll ? n : 1) *
                    static_cast<size_t>(plan.config.output_dim());
      call->scale = scale;
    }
    return Status::kOk;
  });
}

}  // namespace capi
}  // namespace attn

namespace attn {
namespace capi {
namespace {
// The caller's generator, or kBadHandle for one never seeded (state 0).
Status load_rng(const attn_rng* rng, attn::Rng* r) {
  std::memcpy(&r->state, rng, sizeof r->state);
  return r->state == 0 ? Status::kBadHandle : Status::kOk;
}

template <class Sample>
attn_status c_sample(attn_rng* rng, int32_t* token, Sample sample) {
  if (token == nullptr) return to_c(Status::kNullArgument);
  *token = -1;
  attn::Rng r;
  attn::Rng* rp = nullptr;
  if (rng != nullptr) {
    ATTN_TRY_C(attn::capi::load_rng(rng, &r));
    rp = &r;
  }
  int32_t t = -1;
  ATTN_TRY_C(sample(rp, &t));
  *token = t;
  if (rng != nullptr) std::memcpy(rng, &r.state, sizeof r.state);
  return ATTN_OK;
}
}  // namespace
}  // namespace capi
}  // namespace attn

using attn::Status;
using attn::capi::to_c;

extern "C" {

attn_status attn_transformer_config_init(attn_transformer_config* config) {
  if (config == nullptr) return to_c(Status::kNullArgument);
  attn::capi::config_to_c(attn::TransformerConfig(), config);
  return ATTN_OK;
}

attn_status attn_model_transformer_config(const attn_model* model, attn_transformer_config* config,
                                          attn_dtype* dtype) {
  if (config == nullptr || dtype == nullptr) return to_c(Status::kNullArgument);
  std::memset(config, 0, sizeof *config);
  *dtype = 0;
  attn::Model m;
  attn::TransformerConfig c;
  attn::DType dt = attn::DType::kF32;
  ATTN_TRY_C(attn::capi::model_config(model, &m, &c, &dt));
  attn::capi::config_to_c(c, config);
  *dtype = static_cast<attn_dtype>(dt);
  return ATTN_OK;
}

attn_status attn_model_byte_vocab(const attn_model* model, int32_t* byte_vocab) {
  if (byte_vocab == nullptr) return to_c(Status::kNullArgument);
  *byte_vocab = 0;
  attn::Model m;
  ATTN_TRY_C(attn::capi::fetch(model, attn::capi::kModelMagic, &m));
  if (!m.is_model()) return to_c(Status::kNotAModel);
  *byte_vocab = m.byte_vocab() ? 1 : 0;
  return ATTN_OK;
}

attn_status attn_transformer_plan_init(attn_transformer_plan* plan, const attn_transformer_config* config,
                                       attn_dtype dtype, int32_t max_tokens, int32_t capacity,
                                       int32_t tile_rows) {
  if (plan == nullptr || config == nullptr) return to_c(Status::kNullArgument);
  std::memset(plan, 0, sizeof *plan);
  attn::TransformerPlan p;
  ATTN_TRY_C(attn::plan_transformer(attn::capi::to_cpp(*config), static_cast<attn::DType>(dtype), max_tokens,
                                    capacity, &p, tile_rows == 0 ? ATTN_TILE_ROWS : tile_rows));
  attn::capi::store(plan, attn::capi::kPlanMagic, p);
  return ATTN_OK;
}

attn_status attn_transformer_plan_arena_bytes(const attn_transformer_plan* plan, size_t* call_bytes,
                                              size_t* state_bytes) {
  if (call_bytes == nullptr || state_bytes == nullptr) return to_c(Status::kNullArgument);
  *call_bytes = *state_bytes = 0;
  attn::TransformerPlan p;
  ATTN_TRY_C(attn::capi::fetch(plan, attn::capi::kPlanMagic, &p));
  *call_bytes = p.arena_bytes;
  *state_bytes = p.state_bytes;
  return ATTN_OK;
}

attn_status attn_transformer_init_plan_arena_bytes(const attn_transformer_plan* plan, size_t* bytes) {
  if (bytes == nullptr) return to_c(Status::kNullArgument);
  *bytes = 0;
  attn::TransformerPlan p;
  ATTN_TRY_C(attn::capi::fetch(plan, attn::capi::kPlanMagic, &p));
  return to_c(attn::capi::total_bytes(p, bytes));
}

attn_status attn_transformer_init_arena_bytes(const attn_model* model, int32_t max_tokens, int32_t capacity,
                                              size_t* bytes) {
  if (bytes == nullptr) return to_c(Status::kNullArgument);
  *bytes = 0;
  attn::Model m;
  attn::TransformerPlan p;
  ATTN_TRY_C(attn::capi::model_plan(model, max_tokens, capacity, &m, &p));
  return to_c(attn::capi::total_bytes(p, bytes));
}

attn_status attn_transformer_init(attn_transformer* transformer, const attn_model* model, int32_t max_tokens,
                                  int32_t capacity, int32_t window, void* arena, size_t arena_bytes) {
  if (transformer == nullptr) return to_c(Status::kNullArgument);
  std::memset(transformer, 0, sizeof *transformer);
  attn::Model m;
  attn::TransformerPlan p;
  ATTN_TRY_C(attn::capi::model_plan(model, max_tokens, capacity, &m, &p));
  attn::capi::Buffers b;
  b.main = arena;
  b.main_bytes = arena_bytes;
  return attn::capi::bind_model(transformer, m, p, window, b);
}

attn_status attn_transformer_init_split_bytes(const attn_model* model, int32_t tokens_per_call,
                                              int32_t capacity, size_t* state_bytes, size_t* scratch_bytes) {
  if (state_bytes == nullptr || scratch_bytes == nullptr) return to_c(Status::kNullArgument);
  *state_bytes = *scratch_bytes = 0;
  attn::Model m;
  attn::TransformerPlan p;
  ATTN_TRY_C(attn::capi::model_plan(model, tokens_per_call, capacity, &m, &p));
  return to_c(attn::capi::split_bytes(p, state_bytes, scratch_bytes));
}

attn_status attn_transformer_init_split(attn_transformer* transformer, const attn_model* model,
                                        int32_t tokens_per_call, int32_t capacity, int32_t window,
                                        void* state, size_t state_size, void* scratch, size_t scratch_size) {
  if (transformer == nullptr) return to_c(Status::kNullArgument);
  std::memset(transformer, 0, sizeof *transformer);
  attn::Model m;
  attn::TransformerPlan p;
  ATTN_TRY_C(attn::capi::model_plan(model, tokens_per_call, capacity, &m, &p));
  attn::capi::Buffers b;
  b.main = scratch;
  b.main_bytes = scratch_size;
  b.split = true;
  b.caches = state;
  b.caches_bytes = state_size;
  return attn::capi::bind_model(transformer, m, p, window, b);
}

#if ATTN_WITH_F32
attn_status attn_transformer_init_f32(attn_transformer* transformer, const attn_transformer_plan* plan,
                                      const attn_transformer_weights_f32* weights, int32_t window,
                                      void* arena, size_t arena_bytes) {
  if (transformer == nullptr) return to_c(Status::kNullArgument);
  std::memset(transformer, 0, sizeof *transformer);
  attn::TransformerPlan p;
  ATTN_TRY_C(attn::capi::fetch(plan, attn::capi::kPlanMagic, &p));
  if (p.dtype != attn::DType::kF32) return to_c(Status::kBadDtype);
  if (weights == nullptr) return to_c(Status::kNullArgument);
  ATTN_TRY_C(attn::capi::check_weights(p.config, *weights));
  attn::capi::Buffers b;
  b.main = arena;
  b.main_bytes = arena_bytes;
  return attn::capi::bind(transformer, p, window, b, [&](auto, auto* w, auto* layers) {
    using W = std::remove_pointer_t<decltype(w)>;
    if constexpr (std::is_same<W, attn::TransformerWeightsF32>::value) {
      for (int32_t l = 0; l < p.config.num_layers; ++l)
        layers[l] = attn::capi::layer_to_cpp(weights->layers[l]);
      attn::capi::copy_transformer_weights_f32(w, *weights);
      w->layers = layers;
      return Status::kOk;
    } else {
      return Status::kBadDtype;  // not reached: the plan is f32
    }
  });
}
#endif

attn_status attn_transformer_shape(const attn_transformer* transformer, attn_dtype* dtype,
                                   int32_t* output_dim) {
  if (dtype == nullptr || output_dim == nullptr) return to_c(Status::kNullArgument);
  *dtype = 0;
  *output_dim = 0;
  attn::capi::Core* core = nullptr;
  ATTN_TRY_C(attn::capi::fetch_core(transformer, &core));
  *dtype = static_cast<attn_dtype>(core->plan.dtype);
  *output_dim = core->plan.config.output_dim();
  return ATTN_OK;
}

attn_status attn_transformer_forward_s32(const attn_transformer* transformer, const int32_t* tokens,
                                         int32_t n, int rows, int32_t* out, float* out_scale) {
  attn::capi::TransformerCall call;
  return to_c(
      attn::capi::transformer_call(transformer, false, tokens, n, rows, out, false, out_scale, &call));
}

attn_status attn_transformer_decode_s32(attn_transformer* transformer, const int32_t* tokens, int32_t n,
                                        int rows, int32_t* out, float* out_scale) {
  attn::capi::TransformerCall call;
  return to_c(attn::capi::transformer_call(transformer, true, tokens, n, rows, out, false, out_scale, &call));
}

attn_status attn_transformer_reset(attn_transformer* transformer) {
  attn::capi::Core* core = nullptr;
  ATTN_TRY_C(attn::capi::fetch_core(transformer, &core));
  if (core->state == nullptr) return to_c(Status::kPlanMismatch);
  return to_c(attn::capi::dispatch(core->plan.dtype, [&](auto tag) {
    using Api = typename decltype(tag)::Api;
    return attn::transformer_state_reset(static_cast<typename Api::State*>(core->state));
  }));
}

attn_status attn_transformer_length(const attn_transformer* transformer, int32_t* length) {
  if (length == nullptr) return to_c(Status::kNullArgument);
  *length = 0;
  attn::capi::Core* core = nullptr;
  ATTN_TRY_C(attn::capi::fetch_core(transformer, &core));
  if (core->state == nullptr) return to_c(Status::kPlanMismatch);
  return to_c(attn::capi::dispatch(core->plan.dtype, [&](auto tag) {
    using Api = typename decltype(tag)::Api;
    *length = static_cast<const typename Api::State*>(core->state)->length;
    return Status::kOk;
  }));
}

attn_status attn_transformer_set_parallel(attn_transformer* transformer, attn_parallel_fn run, void* ctx,
                                          int32_t workers) {
  attn::capi::Core* core = nullptr;
  ATTN_TRY_C(attn::capi::fetch_core(transformer, &core));
  ATTN_TRY_C(attn::capi::check_parallel(run, workers));
  core->plan.parallel = attn::capi::parallel_to_cpp(run, ctx, workers);
  return ATTN_OK;
}

// ---- sampler: attn_rng holds the xorshift64* state itself (0: never seeded) ----

static_assert(sizeof(attn_rng) == sizeof(uint64_t), "attn_rng is the 8-byte generator state");

attn_status attn_rng_seed(attn_rng* rng, uint64_t seed) {
  if (rng == nullptr) return to_c(Status::kNullArgument);
  attn::Rng r;
  ATTN_TRY_C(attn::rng_seed(seed, &r));
  std::memcpy(rng, &r.state, sizeof r.state);
  return ATTN_OK;
}

attn_status attn_rng_next(attn_rng* rng, uint32_t* bits) {
  if (rng == nullptr || bits == nullptr) return to_c(Status::kNullArgument);
  *bits = 0;
  attn::Rng r;
  ATTN_TRY_C(attn::capi::load_rng(rng, &r));
  ATTN_TRY_C(attn::rng_next(&r, bits));
  std::memcpy(rng, &r.state, sizeof r.state);
  return ATTN_OK;
}

attn_status attn_sample(const float* logits, int32_t n, float temperature, int32_t top_k, attn_rng* rng,
                        int32_t* token) {
  return attn::capi::c_sample(rng, token, [&](attn::Rng* r, int32_t* t) {
    attn::Sampler s;
    s.temperature = temperature;
    s.top_k = top_k;
    return attn::sample(logits, n, s, r, t);
  });
}

attn_status attn_sample_s32(const int32_t* logits, int32_t n, float scale, float temperature, int32_t top_k,
                            attn_rng* rng, int32_t* token) {
  return attn::capi::c_sample(rng, token, [&](attn::Rng* r, int32_t* t) {
    attn::Sampler s;
    s.temperature = temperature;
    s.top_k = top_k;
    return attn::sample_s32(logits, n, scale, s, r, t);
  });
}

attn_status attn_sample_greedy_s32(const int32_t* logits, int32_t n, int32_t* token) {
  if (token == nullptr) return to_c(Status::kNullArgument);
  *token = -1;
  if (logits == nullptr) return to_c(Status::kNullArgument);
  if (n < 1) return to_c(Status::kBadShape);
  int32_t best = 0;
  for (int32_t i = 1; i < n; ++i) best = logits[i] > logits[best] ? i : best;
  *token = best;
  return ATTN_OK;
}

}  // extern "C"
