// The f32 whole-model runtime (attn/transformer.h): the planner's checks and
// sizes, the forward and the decode against the float64 golden models of
// tools/fixtures/gen_transformer_golden.py (tests/data/golden_models), and the
// argument checks of every entry.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "attn/transformer.h"
#include "host_helpers.h"
#include "transformer_golden.h"

namespace {

using attn::Status;

constexpr double kRel = 1e-4;  // max|got - want| <= kRel * max|want|

// max|got - want| / max|want| over want's rows [r0, r0 + rows) against got [rows, cols].
double rel_error(const std::vector<double>& want, size_t r0, size_t rows, size_t cols, const float* got) {
  double err = 0.0, scale = 0.0;
  for (size_t i = 0; i < rows * cols; ++i) {
    const double w = want[r0 * cols + i];
    scale = std::max(scale, std::fabs(w));
    const double e = std::fabs(static_cast<double>(got[i]) - w);
    err = std::isnan(e) ? INFINITY : std::max(err, e);
  }
  return err / scale;
}

std::vector<model_golden::Case> load_cases() {
  std::vector<model_golden::Case> out;
  for (const std::string& dir : model_golden::list_cases()) {
    model_golden::Case c;
    std::string error;
    INFO(dir);
    INFO(error);
    REQUIRE(model_golden::load(dir, &c, &error));
    out.push_back(std::move(c));
  }
  return out;
}

// A small decoder (Llama-like) with random weights, for the checks.
struct Tiny {
  attn::TransformerConfig cfg;
  std::vector<std::vector<float>> store;
  std::vector<attn::LayerWeightsF32> layers;
  attn::TransformerWeightsF32 w;

  const float* make(size_t n, std::mt19937& rng, float scale) {
    store.push_back(random_normal(n, rng, scale));
    return store.back().data();
  }
  explicit Tiny(bool causal = true) {
    cfg.vocab_size = 20, cfg.embed_dim = 16, cfg.num_layers = 2, cfg.num_heads = 2, cfg.num_kv_heads = 1;
    cfg.ffn_dim = 24, cfg.max_positions = 12, cfg.norm = attn::NormKind::kRmsNorm;
    cfg.activation = attn::Activation::kSilu, cfg.head = attn::LmHead::kTied, cfg.rope_base = 10000.0f;
    cfg.pre_norm = true, cfg.gated_ffn = true, cfg.attention_bias = false, cfg.ffn_bias = false;
    cfg.final_norm = true, cfg.causal = causal;
    store.reserve(64);
    std::mt19937 rng(7);
    const size_t E = 16, F = 24, Dkv = 8;
    w.token_embedding = make(20 * E, rng, 1.0f);
    w.final_norm.weight = make(E, rng, 1.0f);
    layers.resize(2);
    for (auto& l : layers) {
      l.attention.wq = make(E * E, rng, 0.25f);
      l.attention.wk = make(Dkv * E, rng, 0.25f);
      l.attention.wv = make(Dkv * E, rng, 0.25f);
      l.attention.wo = make(E * E, rng, 0.25f);
      l.norm1.weight = make(E, rng, 1.0f);
      l.norm2.weight = make(E, rng, 1.0f);
      l.ffn.w1 = make(F * E, rng, 0.25f);
      l.ffn.w2 = make(E * F, rng, 0.2f);
      l.ffn.w3 = make(F * E, rng, 0.25f);
    }
    w.layers = layers.data();
  }
};

// A plan's state arena and call arena, each over its own aligned buffer of
// exactly the planned bytes.
struct PlanArenas {
  AlignedBuffer state_buf, buf;
  attn::Arena state_arena, arena;
  explicit PlanArenas(const attn::TransformerPlan& plan)
      : state_buf(plan.state_bytes), buf(plan.arena_bytes) {
    REQUIRE(state_arena.init(state_buf.data, plan.state_bytes) == Status::kOk);
    REQUIRE(arena.init(buf.data, plan.arena_bytes) == Status::kOk);
  }
};

}  // namespace

TEST_CASE("transformer: plan checks every field with its status", "[transformer]") {
  const Tiny tiny;
  attn::TransformerPlan plan;
  REQUIRE(attn::plan_transformer(tiny.cfg, attn::DType::kF32, 8, 12, &plan) == Status::kOk);
  CHECK(attn::plan_transformer(tiny.cfg, attn::DType::kF32, 8, 12, nullptr) == Status::kNullArgument);
  struct Bad {
    const char* what;
    void (*edit)(attn::TransformerConfig&);
    Status want;
  };
  const Bad bad[] = {
      {"layers 0", [](attn::TransformerConfig& c) { c.num_layers = 0; }, Status::kBadNumLayers},
      {"layers past the cap", [](attn::TransformerConfig& c) { c.num_layers = ATTN_MAX_LAYERS + 1; },
       Status::kBadNumLayers},
      {"vocab 0", [](attn::TransformerConfig& c) { c.vocab_size = 0; }, Status::kBadVocab},
      {"vocab 2^24 + 1", [](attn::TransformerConfig& c) { c.vocab_size = (1 << 24) + 1; }, Status::kBadVocab},
      {"type vocab -1", [](attn::TransformerConfig& c) { c.type_vocab_size = -1; }, Status::kBadVocab},
      {"type vocab 2^16 + 1", [](attn::TransformerConfig& c) { c.type_vocab_size = (1 << 16) + 1; },
       Status::kBadVocab},
      {"ffn 0", [](attn::TransformerConfig& c) { c.ffn_dim = 0; }, Status::kBadFfnDim},
      {"ffn past the cap", [](attn::TransformerConfig& c) { c.ffn_dim = ATTN_MAX_DIM + 1; },
       Status::kBadFfnDim},
      {"positions 0", [](attn::TransformerConfig& c) { c.max_positions = 0; }, Status::kBadMaxPositions},
      {"positions past the cap", [](attn::TransformerConfig& c) { c.max_positions = ATTN_MAX_SEQ + 1; },
       Status::kBadMaxPositions},
      {"norm kind 0", [](attn::TransformerConfig& c) { c.norm = static_cast<attn::NormKind>(0); },
       Status::kBadNorm},
      {"norm kind 3", [](attn::TransformerConfig& c) { c.norm = static_cast<attn::NormKind>(3); },
       Status::kBadNorm},
      {"eps 0", [](attn::TransformerConfig& c) { c.norm_eps = 0.0f; }, Status::kBadNorm},
      {"eps -1e-5", [](attn::TransformerConfig& c) { c.norm_eps = -1e-5f; }, Status::kBadNorm},
      {"eps 1", [](attn::TransformerConfig& c) { c.norm_eps = 1.0f; }, Status::kBadNorm},
      {"eps NaN", [](attn::TransformerConfig& c) { c.norm_eps = std::numeric_limits<float>::quiet_NaN(); },
       Status::kBadNorm},
      {"eps inf", [](attn::TransformerConfig& c) { c.norm_eps = INFINITY; }, Status::kBadNorm},
      {"activation 0", [](attn::TransformerConfig& c) { c.activation = static_cast<attn::Activation>(0); },
       Status::kBadActivation},
      {"activation 5", [](attn::TransformerConfig& c) { c.activation = static_cast<attn::Activation>(5); },
       Status::kBadActivation},
      {"head 3", [](attn::TransformerConfig& c) { c.head = static_cast<attn::LmHead>(3); }, Status::kBadHead},
      {"embed 0", [](attn::TransformerConfig& c) { c.embed_dim = 0; }, Status::kBadEmbedDim},
      {"heads 0", [](attn::TransformerConfig& c) { c.num_heads = 0; }, Status::kBadNumHeads},
      {"heads not dividing E", [](attn::TransformerConfig& c) { c.num_heads = 3; }, Status::kBadHeadDim},
      {"kv heads 3 of 2", [](attn::TransformerConfig& c) { c.num_kv_heads = 3; }, Status::kBadKvHeads},
      {"rope NaN", [](attn::TransformerConfig& c) { c.rope_base = std::numeric_limits<float>::quiet_NaN(); },
       Status::kBadRope},
      {"positions below max_tokens", [](attn::TransformerConfig& c) { c.max_positions = 7; },
       Status::kSequenceTooLong},
      {"a cache without causal", [](attn::TransformerConfig& c) { c.causal = false; }, Status::kNotCausal},
      {"a cache past max_positions", [](attn::TransformerConfig& c) { c.max_positions = 11; },
       Status::kCapacityPastPositions},
  };
  for (const Bad& b : bad) {
    INFO(b.what);
    attn::TransformerConfig c = tiny.cfg;
    b.edit(c);
    plan.arena_bytes = 1;
    CHECK(attn::plan_transformer(c, attn::DType::kF32, 8, 12, &plan) == b.want);
    CHECK(plan.arena_bytes == 0);  // *out reset on failure
  }
  CHECK(attn::plan_transformer(tiny.cfg, attn::DType::kF32, 0, 12, &plan) == Status::kBadQueryLength);
  CHECK(attn::plan_transformer(tiny.cfg, attn::DType::kF32, 8, 12, &plan, 0) == Status::kBadTileRows);
  CHECK(attn::plan_transformer(tiny.cfg, attn::DType::kF32, 8, -1, &plan) == Status::kBadKeyLength);
  CHECK(attn::plan_transformer(tiny.cfg, attn::DType::kF32, 8, ATTN_MAX_SEQ + 1, &plan) ==
        Status::kBadKeyLength);
  CHECK(attn::plan_transformer(tiny.cfg, attn::DType::kS32, 8, 12, &plan) == Status::kBadDtype);
  // An encoder plans without a cache.
  attn::TransformerConfig enc = tiny.cfg;
  enc.causal = false;
  CHECK(attn::plan_transformer(enc, attn::DType::kF32, 8, 0, &plan) == Status::kOk);
  CHECK(plan.state_bytes == 0);
}

TEST_CASE("transformer: plan sizes match the constexpr functions and the carved bytes", "[transformer]") {
  Tiny tiny;
  static constexpr attn::TransformerConfig kCfg = [] {
    attn::TransformerConfig c;
    c.vocab_size = 100, c.embed_dim = 64, c.num_layers = 3, c.num_heads = 4, c.ffn_dim = 256;
    c.max_positions = 128, c.causal = true;
    return c;
  }();
  // Usable to size a static buffer.
  static_assert(attn::transformer_arena_bytes(kCfg, attn::DType::kF32, 32, 64, 8) > 0, "constexpr");
  static_assert(attn::transformer_state_bytes(kCfg, attn::DType::kF32, 64) > 0, "constexpr");
  for (const int32_t tile : {1, 4, 48}) {
    for (const int32_t cap : {0, 12}) {
      attn::TransformerPlan plan;
      REQUIRE(attn::plan_transformer(tiny.cfg, attn::DType::kF32, 8, cap, &plan, tile) == Status::kOk);
      CHECK(plan.arena_bytes == attn::transformer_arena_bytes(tiny.cfg, attn::DType::kF32, 8, cap, tile));
      CHECK(plan.state_bytes == attn::transformer_state_bytes(tiny.cfg, attn::DType::kF32, cap));
      CHECK(plan.tile_rows == std::min(tile, 8));
    }
  }
  // The state takes exactly state_bytes; a forward of max_tokens tokens
  // peaks at exactly arena_bytes, and one byte less is refused.
  attn::TransformerPlan plan;
  REQUIRE(attn::plan_transformer(tiny.cfg, attn::DType::kF32, 8, 12, &plan, 4) == Status::kOk);
  AlignedBuffer state_buf(plan.state_bytes);
  attn::Arena state_arena;
  REQUIRE(state_arena.init(state_buf.data, plan.state_bytes) == Status::kOk);
  attn::TransformerStateF32 state;
  REQUIRE(attn::transformer_state_init_f32(plan, 0, state_arena, &state) == Status::kOk);
  CHECK(state_arena.used() == plan.state_bytes);
  attn::Arena short_state;
  REQUIRE(short_state.init(state_buf.data, plan.state_bytes - 1) == Status::kOk);
  CHECK(attn::transformer_state_init_f32(plan, 0, short_state, &state) == Status::kArenaTooSmall);
  CHECK(short_state.used() == 0);

  attn::TransformerConfig enc = tiny.cfg;
  enc.causal = false;
  for (const bool pre : {false, true}) {
    enc.pre_norm = pre;
    REQUIRE(attn::plan_transformer(enc, attn::DType::kF32, 8, 0, &plan, 4) == Status::kOk);
    AlignedBuffer buf(plan.arena_bytes);
    attn::Arena arena;
    REQUIRE(arena.init(buf.data, plan.arena_bytes) == Status::kOk);
    const std::vector<int32_t> tokens = {1, 2, 3, 4, 5, 6, 7, 8};
    std::vector<float> out(8 * 20);
    REQUIRE(attn::transformer_forward_f32(plan, tiny.w, tokens.data(), 8, attn::OutputRows::kAll, out.data(),
                                          arena) == Status::kOk);
    CHECK(arena.high_water() == plan.arena_bytes);
    CHECK(arena.used() == 0);
    REQUIRE(arena.init(buf.data, plan.arena_bytes - 1) == Status::kOk);
    CHECK(attn::transformer_forward_f32(plan, tiny.w, tokens.data(), 8, attn::OutputRows::kAll, out.data(),
                                        arena) == Status::kArenaTooSmall);
  }
}

TEST_CASE("transformer: golden models, forward_f32 matches float64", "[transformer][golden]") {
  std::vector<model_golden::Case> cases = load_cases();
  REQUIRE(cases.size() >= 8);
  bool post = false, pre = false, rms = false, gqa = false, untied = false, tied = false, none = false,
       relu = false, gelu = false, gelu_tanh = false, silu = false, deep = false;
  for (model_golden::Case& c : cases) {
    INFO(c.name);
    const attn::TransformerConfig& k = c.config;
    post |= !k.pre_norm, pre |= k.pre_norm, rms |= k.norm == attn::NormKind::kRmsNorm;
    gqa |= k.num_kv_heads != 0 && k.num_kv_heads < k.num_heads, deep |= k.num_layers >= 3;
    untied |= k.head == attn::LmHead::kUntied, tied |= k.head == attn::LmHead::kTied;
    none |= k.head == attn::LmHead::kNone, relu |= k.activation == attn::Activation::kRelu;
    gelu |= k.activation == attn::Activation::kGelu, gelu_tanh |= k.activation == attn::Activation::kGeluTanh;
    silu |= k.activation == attn::Activation::kSilu;
    const attn::TransformerWeightsF32 w = c.weights();
    const size_t V = static_cast<size_t>(k.output_dim()), n = static_cast<size_t>(c.n);
    for (const int32_t tile : {ATTN_TILE_ROWS, 1, 4}) {
      INFO("tile_rows " << tile);
      attn::TransformerPlan plan;
      REQUIRE(attn::plan_transformer(k, attn::DType::kF32, c.n, 0, &plan, tile) == Status::kOk);
      AlignedBuffer buf(plan.arena_bytes);
      attn::Arena arena;
      REQUIRE(arena.init(buf.data, plan.arena_bytes) == Status::kOk);
      std::vector<float> out(n * V, NAN);
      REQUIRE(attn::transformer_forward_f32(plan, w, c.tokens.data(), c.n, attn::OutputRows::kAll, out.data(),
                                            arena) == Status::kOk);
      const double err = rel_error(c.expected, 0, n, V, out.data());
      INFO("error " << err);
      CHECK(err <= kRel);
      std::vector<float> last(V, NAN);
      REQUIRE(attn::transformer_forward_f32(plan, w, c.tokens.data(), c.n, attn::OutputRows::kLast,
                                            last.data(), arena) == Status::kOk);
      CHECK(rel_error(c.expected, n - 1, 1, V, last.data()) <= kRel);
      // kFirst: one row, row 0 (an encoder's [CLS]), the kAll row's numbers within f32 rounding.
      std::vector<float> first(V + 1, NAN);
      REQUIRE(attn::transformer_forward_f32(plan, w, c.tokens.data(), c.n, attn::OutputRows::kFirst,
                                            first.data(), arena) == Status::kOk);
      CHECK(rel_error(c.expected, 0, 1, V, first.data()) <= kRel);
      CHECK(std::isnan(first[V]));
      CHECK(rel_error(std::vector<double>(out.begin(), out.begin() + std::ptrdiff_t(V)), 0, 1, V,
                      first.data()) <= 1e-6);
    }
  }
  CHECK((post && pre && rms && gqa && untied && tied && none && relu && gelu && gelu_tanh && silu && deep));
}

TEST_CASE("transformer: golden decoders, decode (prefill and steps) matches float64",
          "[transformer][golden]") {
  std::vector<model_golden::Case> cases = load_cases();
  int decoders = 0;
  for (model_golden::Case& c : cases) {
    if (!c.config.causal) continue;
    ++decoders;
    INFO(c.name);
    const attn::TransformerWeightsF32 w = c.weights();
    const size_t V = static_cast<size_t>(c.config.output_dim());
    attn::TransformerPlan plan;
    REQUIRE(attn::plan_transformer(c.config, attn::DType::kF32, c.n, c.n, &plan) == Status::kOk);
    PlanArenas arenas(plan);
    attn::Arena &state_arena = arenas.state_arena, &arena = arenas.arena;
    attn::TransformerStateF32 state;
    REQUIRE(attn::transformer_state_init_f32(plan, 0, state_arena, &state) == Status::kOk);
    // Prefills of every length, then one token at a time (kAll and kLast alike for one token).
    for (int32_t prefill = 1; prefill <= c.n; ++prefill) {
      INFO("prefill " << prefill);
      REQUIRE(attn::transformer_state_reset(&state) == Status::kOk);
      std::vector<float> out(static_cast<size_t>(prefill) * V, NAN);
      REQUIRE(attn::transformer_decode_f32(plan, w, &state, c.tokens.data(), prefill, attn::OutputRows::kAll,
                                           out.data(), arena) == Status::kOk);
      CHECK(rel_error(c.expected, 0, static_cast<size_t>(prefill), V, out.data()) <= kRel);
      for (int32_t i = prefill; i < c.n; ++i) {
        std::vector<float> row(V, NAN);
        const attn::OutputRows rows = i % 2 == 0 ? attn::OutputRows::kLast : attn::OutputRows::kAll;
        REQUIRE(attn::transformer_decode_f32(plan, w, &state, &c.tokens[static_cast<size_t>(i)], 1, rows,
                                             row.data(), arena) == Status::kOk);
        INFO("step " << i);
        CHECK(rel_error(c.expected, static_cast<size_t>(i), 1, V, row.data()) <= kRel);
      }
      CHECK(state.length == c.n);
      CHECK(arena.used() == 0);
    }
  }
  CHECK(decoders >= 3);
}

TEST_CASE("transformer: a forward checks everything before it writes", "[transformer]") {
  Tiny tiny;
  attn::TransformerPlan plan;
  REQUIRE(attn::plan_transformer(tiny.cfg, attn::DType::kF32, 8, 0, &plan) == Status::kOk);
  AlignedBuffer buf(plan.arena_bytes);
  attn::Arena arena;
  REQUIRE(arena.init(buf.data, plan.arena_bytes) == Status::kOk);
  std::vector<int32_t> tokens = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> out(8 * 20, 7.0f);
  auto run = [&](const attn::TransformerPlan& p, const attn::TransformerWeightsF32& w, const int32_t* t,
                 int32_t n, attn::OutputRows rows = attn::OutputRows::kAll) {
    const Status st = attn::transformer_forward_f32(p, w, t, n, rows, out.data(), arena);
    const bool untouched = std::all_of(out.begin(), out.end(), [](float v) { return v == 7.0f; });
    return st == Status::kOk || untouched ? st : Status::kOk;  // a failure that wrote reads as kOk here
  };
  CHECK(run(plan, tiny.w, nullptr, 8) == Status::kNullArgument);
  CHECK(attn::transformer_forward_f32(plan, tiny.w, tokens.data(), 8, attn::OutputRows::kAll, nullptr,
                                      arena) == Status::kNullArgument);
  CHECK(run(plan, tiny.w, tokens.data(), 0) == Status::kBadQueryLength);
  CHECK(run(plan, tiny.w, tokens.data(), 9) == Status::kSequenceTooLong);
  CHECK(run(plan, tiny.w, tokens.data(), 8, static_cast<attn::OutputRows>(3)) == Status::kBadShape);
  for (const int32_t bad : {-1, 20}) {
    tokens[5] = bad;
    CHECK(run(plan, tiny.w, tokens.data(), 8) == Status::kTokenOutOfRange);
  }
  tokens[5] = 19;
  // Every weight the config needs.
  attn::TransformerWeightsF32 w = tiny.w;
  w.token_embedding = nullptr;
  CHECK(run(plan, w, tokens.data(), 8) == Status::kNullArgument);
  w = tiny.w;
  w.final_norm.weight = nullptr;
  CHECK(run(plan, w, tokens.data(), 8) == Status::kNullArgument);
  w = tiny.w;
  w.layers = nullptr;
  CHECK(run(plan, w, tokens.data(), 8) == Status::kNullArgument);
  std::vector<attn::LayerWeightsF32> layers = tiny.layers;
  w = tiny.w;
  w.layers = layers.data();
  layers[1].ffn.w3 = nullptr;
  CHECK(run(plan, w, tokens.data(), 8) == Status::kNullArgument);
  layers[1] = tiny.layers[1];
  layers[1].attention.wk = nullptr;
  CHECK(run(plan, w, tokens.data(), 8) == Status::kNullArgument);
  layers[1] = tiny.layers[1];
  layers[0].norm2.weight = nullptr;
  CHECK(run(plan, w, tokens.data(), 8) == Status::kNullArgument);
  layers[0] = tiny.layers[0];
  attn::TransformerConfig untied = tiny.cfg;
  untied.head = attn::LmHead::kUntied;
  attn::TransformerPlan untied_plan;
  REQUIRE(attn::plan_transformer(untied, attn::DType::kF32, 8, 0, &untied_plan) == Status::kOk);
  CHECK(run(untied_plan, w, tokens.data(), 8) == Status::kNullArgument);  // no lm_head
  // Plans: another dtype, edited, zero.
  attn::TransformerPlan edited = plan;
  edited.dtype = attn::DType::kS8;
  CHECK(run(edited, tiny.w, tokens.data(), 8) == Status::kBadDtype);
  edited = plan;
  edited.arena_bytes -= 16;
  CHECK(run(edited, tiny.w, tokens.data(), 8) == Status::kPlanMismatch);
  edited = plan;
  edited.max_tokens = 9;
  CHECK(run(edited, tiny.w, tokens.data(), 8) == Status::kPlanMismatch);
  CHECK(run(attn::TransformerPlan(), tiny.w, tokens.data(), 8) == Status::kPlanMismatch);
  // And with every argument right, it runs.
  CHECK(attn::transformer_forward_f32(plan, tiny.w, tokens.data(), 8, attn::OutputRows::kAll, out.data(),
                                      arena) == Status::kOk);
}

TEST_CASE("transformer: decode states, cache full, window, reset", "[transformer]") {
  Tiny tiny;
  attn::TransformerPlan plan;
  REQUIRE(attn::plan_transformer(tiny.cfg, attn::DType::kF32, 4, 6, &plan) == Status::kOk);
  PlanArenas arenas(plan);
  attn::Arena &state_arena = arenas.state_arena, &arena = arenas.arena;
  attn::TransformerStateF32 state;
  CHECK(attn::transformer_state_init_f32(plan, 7, state_arena, &state) == Status::kBadWindow);
  CHECK(attn::transformer_state_init_f32(plan, -1, state_arena, &state) == Status::kBadWindow);
  CHECK(attn::transformer_state_init_f32(plan, 0, state_arena, nullptr) == Status::kNullArgument);
  attn::TransformerPlan forward_only;
  REQUIRE(attn::plan_transformer(tiny.cfg, attn::DType::kF32, 4, 0, &forward_only) == Status::kOk);
  CHECK(attn::transformer_state_init_f32(forward_only, 0, state_arena, &state) == Status::kPlanMismatch);
  CHECK(state_arena.used() == 0);
  REQUIRE(attn::transformer_state_init_f32(plan, 0, state_arena, &state) == Status::kOk);

  const std::vector<int32_t> tokens = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8};
  std::vector<float> out(4 * 20);
  auto decode = [&](const attn::TransformerPlan& p, attn::TransformerStateF32* s, size_t at, int32_t n) {
    return attn::transformer_decode_f32(p, tiny.w, s, tokens.data() + at, n, attn::OutputRows::kAll,
                                        out.data(), arena);
  };
  CHECK(decode(plan, &state, 0, 5) == Status::kSequenceTooLong);  // above max_tokens
  CHECK(decode(forward_only, &state, 0, 1) == Status::kPlanMismatch);
  CHECK(decode(plan, nullptr, 0, 1) == Status::kNullArgument);
  REQUIRE(decode(plan, &state, 0, 4) == Status::kOk);
  REQUIRE(decode(plan, &state, 4, 2) == Status::kOk);
  CHECK(state.length == 6);
  CHECK(decode(plan, &state, 6, 1) == Status::kCacheFull);  // nothing changed
  CHECK(state.length == 6);
  CHECK(state.caches[0].length == 6);
  REQUIRE(attn::transformer_state_reset(&state) == Status::kOk);
  CHECK(state.length == 0);
  CHECK(state.caches[1].length == 0);
  CHECK(attn::transformer_state_reset(nullptr) == Status::kNullArgument);
  // A state whose layers disagree (edited by hand) is refused.
  REQUIRE(decode(plan, &state, 0, 2) == Status::kOk);
  state.caches[1].length = 1;
  CHECK(decode(plan, &state, 2, 1) == Status::kPlanMismatch);
  state.caches[1].length = 2;
  // An edited start near INT32_MAX: start + length must not overflow in the
  // check (UBSan, host-asan preset), and the state is refused.
  state.caches[1].start = INT32_MAX - 1;
  CHECK(decode(plan, &state, 2, 1) == Status::kPlanMismatch);
  state.caches[1].start = -1;  // -1 + 3 == 2, the state's length: still refused
  state.caches[1].length = 3;
  CHECK(decode(plan, &state, 2, 1) == Status::kPlanMismatch);
  CHECK(state.caches[0].length == 2);  // refused before layer 0 ran
  state.caches[1].start = 0;
  state.caches[1].length = 2;
  CHECK(state.length == 2);

  // With a window the cache keeps the last W positions and decodes past its
  // capacity, up to max_positions; while the window holds every position
  // the outputs are the full forward's.
  attn::Arena win_arena;
  AlignedBuffer win_buf(plan.state_bytes);
  REQUIRE(win_arena.init(win_buf.data, plan.state_bytes) == Status::kOk);
  attn::TransformerStateF32 win;
  REQUIRE(attn::transformer_state_init_f32(plan, 6, win_arena, &win) == Status::kOk);
  attn::TransformerPlan full;
  REQUIRE(attn::plan_transformer(tiny.cfg, attn::DType::kF32, 12, 0, &full) == Status::kOk);
  AlignedBuffer full_buf(full.arena_bytes);
  attn::Arena full_arena;
  REQUIRE(full_arena.init(full_buf.data, full.arena_bytes) == Status::kOk);
  std::vector<float> want(12 * 20);
  REQUIRE(attn::transformer_forward_f32(full, tiny.w, tokens.data(), 12, attn::OutputRows::kAll, want.data(),
                                        full_arena) == Status::kOk);
  for (size_t i = 0; i < 12; ++i) {
    REQUIRE(decode(plan, &win, i, 1) == Status::kOk);
    if (i < 6) {
      std::vector<double> row(want.begin() + static_cast<ptrdiff_t>(i * 20),
                              want.begin() + static_cast<ptrdiff_t>(i * 20 + 20));
      CHECK(rel_error(row, 0, 1, 20, out.data()) <= 1e-5);
    }
  }
  CHECK(win.length == 12);
  CHECK(decode(plan, &win, 0, 1) == Status::kSequenceTooLong);  // position 12 = max_positions
}

TEST_CASE("transformer: weights packed once give the unpacked numbers", "[transformer]") {
  // A width past the stack panel's depth (F = 300 > 256: W2 is packed only here).
  Tiny tiny(false);
  tiny.cfg.ffn_dim = 300;
  std::mt19937 rng(3);
  for (auto& l : tiny.layers) {
    l.ffn.w1 = tiny.make(300 * 16, rng, 0.25f);
    l.ffn.w2 = tiny.make(16 * 300, rng, 0.05f);
    l.ffn.w3 = tiny.make(300 * 16, rng, 0.25f);
  }
  attn::TransformerPlan plan;
  REQUIRE(attn::plan_transformer(tiny.cfg, attn::DType::kF32, 12, 0, &plan) == Status::kOk);
  AlignedBuffer buf(plan.arena_bytes);
  attn::Arena arena;
  REQUIRE(arena.init(buf.data, plan.arena_bytes) == Status::kOk);
  const std::vector<int32_t> tokens = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8};
  std::vector<float> want(12 * 20), got(12 * 20);
  REQUIRE(attn::transformer_forward_f32(plan, tiny.w, tokens.data(), 12, attn::OutputRows::kAll, want.data(),
                                        arena) == Status::kOk);
  size_t bytes = 0;
  REQUIRE(attn::pack_transformer_weights_f32_storage_bytes(plan, &bytes) == Status::kOk);
  AlignedBuffer pbuf(bytes + 1);
  std::vector<attn::LayerWeightsF32> layers = tiny.layers;
  CHECK(attn::pack_transformer_weights_f32_storage_bytes(plan, nullptr) == Status::kNullArgument);
  CHECK(attn::pack_transformer_weights_f32(plan, nullptr, pbuf.data, bytes) == Status::kNullArgument);
  if (bytes > 0) {
    CHECK(attn::pack_transformer_weights_f32(plan, layers.data(), pbuf.data, bytes - 1) ==
          Status::kBufferTooSmall);
    CHECK(attn::pack_transformer_weights_f32(plan, layers.data(), pbuf.data + 1, bytes) ==
          Status::kArenaMisaligned);
    CHECK(attn::pack_transformer_weights_f32(plan, layers.data(), nullptr, bytes) == Status::kNullArgument);
    CHECK(layers[0].ffn.packed == nullptr);
  }
  REQUIRE(attn::pack_transformer_weights_f32(plan, layers.data(), pbuf.data, bytes) == Status::kOk);
  CHECK((layers[1].ffn.packed != nullptr) == (bytes > 0));
  attn::TransformerWeightsF32 w = tiny.w;
  w.layers = layers.data();
  REQUIRE(attn::transformer_forward_f32(plan, w, tokens.data(), 12, attn::OutputRows::kAll, got.data(),
                                        arena) == Status::kOk);
  std::vector<double> want64(want.begin(), want.end());
  CHECK(rel_error(want64, 0, 12, 20, got.data()) <= 1e-5);
}
