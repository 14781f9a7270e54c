// decode_s8 / decode_s16 over a KV cache give, bit for bit, what one causal
// forward_s8 / forward_s16 over the same rows gives: token by token, after a
// prefill, a few rows per call, and with a sliding window; plus the cache's
// full / reset behaviour and every misuse's status.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

#include "attn/attention_fixed.h"
#include "attn/decode.h"
#include "attn/quantize.h"
#include "catch_helpers.h"
#include "fixed_dtypes.h"
#include "host_helpers.h"

namespace {

using attn::DType;
using attn::Status;

using dtypes::S16;
using dtypes::S8;

// A float block quantized by the library's converter, calibrated on a few
// causal self-attention examples; its float inputs, quantized.
template <class D>
struct Quantized {
  attn::AttentionConfig cfg;
  std::vector<float> wq, wk, wv, wo, bq, bk, bv, bo;
  AlignedBuffer storage{0};
  typename D::Weights w;
  attn::ActivationQuant act;

  attn::WeightsF32 f32() const {
    return {wq.data(), wk.data(), wv.data(), wo.data(), bq.data(), bk.data(), bv.data(), bo.data()};
  }
};

template <class D>
void quantize(Quantized<D>* q, attn::AttentionConfig cfg, uint32_t seed,
              const attn::QuantizeOptions& options = attn::QuantizeOptions()) {
  std::mt19937 rng(seed);
  const size_t E = size_t(cfg.embed_dim), Dm = size_t(cfg.inner_dim()), Dkv = size_t(cfg.kv_dim());
  q->cfg = cfg;
  q->wq = random_normal(Dm * E, rng, 1.0f / std::sqrt(float(E)));
  q->wk = random_normal(Dkv * E, rng, 1.0f / std::sqrt(float(E)));
  q->wv = random_normal(Dkv * E, rng, 1.0f / std::sqrt(float(E)));
  q->wo = random_normal(E * Dm, rng, 1.0f / std::sqrt(float(Dm)));
  q->bq = random_normal(Dm, rng, 0.1f), q->bk = random_normal(Dkv, rng, 0.1f),
  q->bv = random_normal(Dkv, rng, 0.1f);
  q->bo = random_normal(E, rng, 0.1f);
  const int L = 16;
  attn::Plan plan;
  REQUIRE(attn::plan_attention(cfg, DType::kF32, L, L, &plan) == Status::kOk);
  const size_t bytes = attn::calibrate_attention_arena_bytes(cfg, L, L);
  AlignedBuffer buf(bytes);
  attn::Arena arena;
  REQUIRE(arena.init(buf.data, bytes) == Status::kOk);
  attn::Mask mask;
  mask.causal = true;
  attn::CalibrationRanges ranges;
  for (int i = 0; i < 4; ++i) {
    const auto x = random_normal(size_t(L) * E, rng, 1.0f);
    attn::IoF32 io{x.data(), x.data(), x.data(), nullptr};
    REQUIRE(attn::calibrate_attention(plan, q->f32(), mask, io, arena, &ranges) == Status::kOk);
    // The tests decode with and without windows: ranges for every mask.
    REQUIRE(attn::calibrate_any_mask(plan, q->f32(), io, arena, &ranges) == Status::kOk);
  }
  const size_t st_bytes = attn::quantize_attention_storage_bytes(cfg, D::kDtype, options);
  q->storage = AlignedBuffer(st_bytes);
  attn::Arena st;
  REQUIRE(st.init(q->storage.data, st_bytes) == Status::kOk);
  REQUIRE(D::quantize(cfg, q->f32(), ranges, st, &q->w, &q->act, options) == Status::kOk);
}

// A decode plan for q (chunk query rows, capacity cached rows) and a
// 4096-byte arena, both required to set up.
struct DecodeSetup {
  template <class D>
  DecodeSetup(const Quantized<D>& q, int32_t chunk, int32_t capacity) {
    REQUIRE(attn::plan_decode(q.cfg, D::kDtype, chunk, capacity, &plan) == Status::kOk);
    REQUIRE(arena.init(buf.data, 4096) == Status::kOk);
  }
  attn::Plan plan;
  AlignedBuffer buf{4096};
  attn::Arena arena;
};

template <class D>
std::vector<typename D::T> quantized_input(const Quantized<D>& q, int L, uint32_t seed) {
  std::mt19937 rng(seed);
  const auto xf = random_normal(size_t(L) * q.cfg.embed_dim, rng, 1.0f);
  std::vector<typename D::T> x(xf.size());
  for (size_t i = 0; i < xf.size(); ++i)
    x[i] = static_cast<typename D::T>(attn::quantize_value(xf[i], q.act.query, D::kDtype));
  return x;
}

// y of one causal (windowed) forward over all L rows.
template <class D>
std::vector<typename D::T> full_forward(const Quantized<D>& q, const std::vector<typename D::T>& x, int L,
                                        int window) {
  return causal_forward(q.cfg, D::kDtype, q.w, x, L, window, D::forward);
}

// x through a cache: `prefill` rows in one call, then `step` rows per call.
template <class D>
std::vector<typename D::T> decode_all(const Quantized<D>& q, const std::vector<typename D::T>& x, int L,
                                      int capacity, int window, int prefill, int step,
                                      int tile_rows = ATTN_TILE_ROWS) {
  const int max_rows = std::max(prefill, step);
  attn::Plan plan;
  REQUIRE(attn::plan_decode(q.cfg, D::kDtype, max_rows, capacity, &plan, tile_rows) == Status::kOk);
  REQUIRE(plan.arena_bytes == attn::decode_arena_bytes(q.cfg, D::kDtype, max_rows, capacity, tile_rows));
  const size_t cache_bytes = attn::kv_cache_arena_bytes(q.cfg, D::kDtype, capacity);
  REQUIRE(cache_bytes > 0);
  AlignedBuffer buf(cache_bytes + plan.arena_bytes);
  attn::Arena arena;
  REQUIRE(arena.init(buf.data, cache_bytes + plan.arena_bytes) == Status::kOk);
  typename D::Cache cache;
  REQUIRE(D::init(plan, window, arena, &cache) == Status::kOk);
  REQUIRE(arena.used() == cache_bytes);
  const int E = q.cfg.embed_dim;
  std::vector<typename D::T> y(x.size());
  for (int r = 0; r < L;) {
    const int n = r == 0 && prefill > 0 ? std::min(prefill, L) : std::min(step, L - r);
    REQUIRE(D::decode(plan, q.w, &cache, x.data() + r * E, n, y.data() + r * E, arena) == Status::kOk);
    r += n;
    REQUIRE(cache.next_position() == r);
  }
  REQUIRE(arena.used() == cache_bytes);  // decode gives its scratch back
  return y;
}

template <class D>
void check_equivalence(const attn::AttentionConfig& cfg) {
  Quantized<D> q;
  quantize(&q, cfg, 17);
  const int L = 23;
  const auto x = quantized_input(q, L, 5);
  const auto want = full_forward(q, x, L, 0);
  CHECK(decode_all(q, x, L, L, 0, 0, 1) == want);      // one row at a time
  CHECK(decode_all(q, x, L, 32, 0, 9, 1) == want);     // prefill 9, then one at a time
  CHECK(decode_all(q, x, L, L, 0, L, 1) == want);      // everything in one prefill
  CHECK(decode_all(q, x, L, 40, 0, 0, 3) == want);     // three rows per call
  CHECK(decode_all(q, x, L, L, 0, 10, 4, 3) == want);  // prefill through 3-row tiles, then 4 rows per call
  // A different output is caught: the test can fail.
  std::vector<typename D::T> other(x);
  for (int i = 0; i < cfg.embed_dim; ++i) other[size_t(i)] = static_cast<typename D::T>(~other[size_t(i)]);
  const auto y_other = decode_all(q, other, L, L, 0, 0, 1);
  CHECK(y_other != want);
}

template <class D>
void check_window() {
  Quantized<D> q;
  quantize(&q, {16, 4, 0, 0, 0, true, 2, 10000.0f}, 23);  // Llama-style: GQA + RoPE
  const int L = 30;
  const auto x = quantized_input(q, L, 6);
  for (int window : {1, 4, 8}) {
    const auto want = full_forward(q, x, L, window);
    CHECK(decode_all(q, x, L, window, window, 0, 1) == want);      // capacity == window
    CHECK(decode_all(q, x, L, window + 5, window, 6, 2) == want);  // prefill through the ring
    CHECK(decode_all(q, x, L, 2 * window, window, 0, 3) == want);  // three rows per call
  }
  // The window matters: without it the outputs differ.
  CHECK(full_forward(q, x, L, 4) != full_forward(q, x, L, 0));
}

template <class D>
void check_errors() {
  Quantized<D> q;
  quantize(&q, {8, 2}, 3);
  DecodeSetup setup(q, 2, 4);
  const attn::Plan& plan = setup.plan;
  attn::Arena& arena = setup.arena;
  typename D::Cache cache;
  CHECK(D::init(plan, 5, arena, &cache) == Status::kBadWindow);
  CHECK(D::init(plan, -1, arena, &cache) == Status::kBadWindow);
  CHECK(D::init(plan, 0, arena, nullptr) == Status::kNullArgument);
  // A too-small arena for the cache: nothing carved.
  {
    AlignedBuffer small_buf(attn::kv_cache_arena_bytes(q.cfg, D::kDtype, 4));
    attn::Arena small;
    REQUIRE(small.init(small_buf.data, attn::kv_cache_arena_bytes(q.cfg, D::kDtype, 4) - 1) == Status::kOk);
    CHECK(D::init(plan, 0, small, &cache) == Status::kArenaTooSmall);
    CHECK(small.used() == 0);
  }
  // A plan of another dtype, a forward plan.
  attn::Plan f32_plan, forward_plan;
  REQUIRE(attn::plan_decode(q.cfg, DType::kF32, 2, 4, &f32_plan) == Status::kOk);
  REQUIRE(attn::plan_attention(q.cfg, D::kDtype, 2, 4, &forward_plan) == Status::kOk);
  CHECK(D::init(f32_plan, 0, arena, &cache) == Status::kBadDtype);
  CHECK(D::init(forward_plan, 0, arena, &cache) == Status::kPlanMismatch);
  attn::KvCacheF32 f32_cache;
  CHECK(attn::kv_cache_init_f32(plan, 0, arena, &f32_cache) == Status::kBadDtype);

  REQUIRE(D::init(plan, 0, arena, &cache) == Status::kOk);
  std::vector<typename D::T> x(3 * 8, 5), y(3 * 8);
  CHECK(D::decode(plan, q.w, &cache, x.data(), 3, y.data(), arena) == Status::kBadQueryLength);
  CHECK(D::decode(plan, q.w, &cache, x.data(), 0, y.data(), arena) == Status::kBadQueryLength);
  CHECK(D::decode(plan, q.w, nullptr, x.data(), 1, y.data(), arena) == Status::kNullArgument);
  CHECK(D::decode(plan, q.w, &cache, nullptr, 1, y.data(), arena) == Status::kNullArgument);
  CHECK(D::decode(plan, q.w, &cache, x.data(), 1, nullptr, arena) == Status::kNullArgument);
  CHECK(D::decode(f32_plan, q.w, &cache, x.data(), 1, y.data(), arena) == Status::kBadDtype);
  CHECK(D::decode(forward_plan, q.w, &cache, x.data(), 1, y.data(), arena) == Status::kPlanMismatch);
  CHECK(D::forward(plan, q.w, {}, {x.data(), x.data(), x.data(), y.data()}, arena) == Status::kPlanMismatch);
  // An uninitialized cache, a cache made for another capacity.
  typename D::Cache blank;
  CHECK(D::decode(plan, q.w, &blank, x.data(), 1, y.data(), arena) == Status::kNullArgument);
  {
    attn::Plan plan8;
    REQUIRE(attn::plan_decode(q.cfg, D::kDtype, 2, 8, &plan8) == Status::kOk);
    typename D::Cache other;
    REQUIRE(D::init(plan8, 0, arena, &other) == Status::kOk);
    CHECK(D::decode(plan, q.w, &other, x.data(), 1, y.data(), arena) == Status::kPlanMismatch);
  }
  // Bad weights: the forward's checks.
  {
    typename D::Weights bad = q.w;
    bad.softmax.exp_multiplier = 1;
    CHECK(D::decode(plan, bad, &cache, x.data(), 1, y.data(), arena) == Status::kBadQuantParams);
    bad = q.w;
    bad.q.weight = nullptr;
    CHECK(D::decode(plan, bad, &cache, x.data(), 1, y.data(), arena) == Status::kNullArgument);
  }
  CHECK(cache.length == 0);  // no failed call touched the cache
  // A short step arena: kArenaTooSmall, the cache untouched.
  {
    AlignedBuffer step_buf(plan.arena_bytes);
    attn::Arena step;
    REQUIRE(step.init(step_buf.data, plan.arena_bytes - 1) == Status::kOk);
    CHECK(D::decode(plan, q.w, &cache, x.data(), 1, y.data(), step) == Status::kArenaTooSmall);
    CHECK(cache.length == 0);
  }
  // Full, then reset.
  REQUIRE(D::decode(plan, q.w, &cache, x.data(), 2, y.data(), arena) == Status::kOk);
  REQUIRE(D::decode(plan, q.w, &cache, x.data(), 2, y.data(), arena) == Status::kOk);
  const std::vector<typename D::T> y_at_4(y.begin(), y.begin() + 16);
  CHECK(D::decode(plan, q.w, &cache, x.data(), 1, y.data(), arena) == Status::kCacheFull);
  CHECK(cache.length == 4);  // nothing changed
  CHECK(cache.next_position() == 4);
  CHECK(attn::kv_cache_reset(static_cast<typename D::Cache*>(nullptr)) == Status::kNullArgument);
  REQUIRE(attn::kv_cache_reset(&cache) == Status::kOk);
  CHECK(cache.length == 0);
  CHECK(cache.next_position() == 0);
  // After a reset the cache decodes as new: the first two rows again give what they gave first.
  std::vector<typename D::T> y2(2 * 8), y_first(2 * 8);
  {
    typename D::Cache fresh;
    REQUIRE(D::init(plan, 0, arena, &fresh) == Status::kOk);
    REQUIRE(D::decode(plan, q.w, &fresh, x.data(), 2, y_first.data(), arena) == Status::kOk);
  }
  REQUIRE(D::decode(plan, q.w, &cache, x.data(), 2, y2.data(), arena) == Status::kOk);
  CHECK(y2 == y_first);
  // A windowed cache never fills.
  typename D::Cache ring;
  REQUIRE(D::init(plan, 3, arena, &ring) == Status::kOk);
  for (int i = 0; i < 10; ++i)
    REQUIRE(D::decode(plan, q.w, &ring, x.data(), 2, y.data(), arena) == Status::kOk);
  CHECK(ring.next_position() == 20);
  CHECK(ring.length == 4);
}

// A RoPE table of 6 positions: decoding stops with kRopePositionOutOfRange at
// position 6, cache untouched; a reset starts over.
template <class D>
void check_rope_limit() {
  Quantized<D> q;
  attn::QuantizeOptions options;
  options.max_positions = 6;
  quantize(&q, {16, 4, 0, 0, 0, true, 2, 10000.0f}, 29, options);
  REQUIRE(q.w.rope.positions == 6);
  DecodeSetup setup(q, 4, 8);
  const attn::Plan& plan = setup.plan;
  attn::Arena& arena = setup.arena;
  typename D::Cache cache;
  REQUIRE(D::init(plan, 3, arena, &cache) == Status::kOk);  // a window: never full, positions keep growing
  const auto x = quantized_input(q, 8, 31);
  std::vector<typename D::T> y(x.size());
  REQUIRE(D::decode(plan, q.w, &cache, x.data(), 4, y.data(), arena) == Status::kOk);
  CHECK(D::decode(plan, q.w, &cache, x.data(), 3, y.data(), arena) == Status::kRopePositionOutOfRange);
  CHECK(cache.next_position() == 4);
  REQUIRE(D::decode(plan, q.w, &cache, x.data(), 2, y.data(), arena) == Status::kOk);
  CHECK(D::decode(plan, q.w, &cache, x.data(), 1, y.data(), arena) == Status::kRopePositionOutOfRange);
  typename D::Weights no_table = q.w;
  no_table.rope.sin = nullptr;
  REQUIRE(attn::kv_cache_reset(&cache) == Status::kOk);
  CHECK(D::decode(plan, no_table, &cache, x.data(), 1, y.data(), arena) == Status::kNullArgument);
  CHECK(D::decode(plan, q.w, &cache, x.data(), 1, y.data(), arena) == Status::kOk);
}

}  // namespace

static_assert(attn::kv_cache_arena_bytes({64, 8, 0, 0, 0, true, 4}, DType::kS8, 256) == 2 * 256 * 32,
              "s8 cache: K and V [capacity, Dkv] int8");
static_assert(attn::kv_cache_arena_bytes({64, 8, 0, 0, 0, true, 4}, DType::kS16, 256) == 2 * 256 * 32 * 2,
              "s16 cache: K and V [capacity, Dkv] int16");
static_assert(attn::decode_arena_bytes({64, 8}, DType::kS8, 1, 256, 4) == 64 + 64 + 256 * 4 &&
                  attn::decode_arena_bytes({64, 8}, DType::kS16, 1, 256, 4) == 128 + 128 + 256 * 4,
              "s8/s16 decode step: Q and O tiles [T, D], scores [T, capacity] int32");
static_assert(attn::decode_arena_bytes({64, 8, 0, 0, 0, true, 4}, DType::kS8, 1, 256, 4) ==
                      64 + 64 + 2 * 256 * 4 &&
                  attn::decode_arena_bytes({64, 8, 0, 0, 0, true, 1}, DType::kS8, 1, 256, 4) ==
                      64 + 64 + 4 * 256 * 4 &&
                  attn::decode_arena_bytes({64, 8, 0, 0, 0, true, 1}, DType::kS8, 8, 256, 4) ==
                      4 * 64 + 4 * 64 + 4 * 256 * 4,
              "grouped-query decode step: scores of at least min(G, 4) rows, G query heads per K/V head");

TEST_CASE("decode_s8: token by token equals one causal forward_s8, bit for bit", "[decode][s8]") {
  check_equivalence<S8>({16, 4});
  check_equivalence<S8>({16, 4, 0, 0, 0, true, 2});            // grouped-query
  check_equivalence<S8>({24, 6, 4, 0, 0, true, 1});            // multi-query, head_dim != E / H
  check_equivalence<S8>({16, 4, 0, 0, 0, true, 2, 10000.0f});  // grouped-query + RoPE (Llama-style)
  check_equivalence<S8>({24, 6, 4, 0, 0, false, 1, 500.0f});   // multi-query + RoPE, no biases
  check_equivalence<S8>({16, 4, 0, 0, 0, true, 0, 10000.0f});  // RoPE alone
}

TEST_CASE("decode_s16: token by token equals one causal forward_s16, bit for bit", "[decode][s16]") {
  check_equivalence<S16>({16, 4});
  check_equivalence<S16>({16, 4, 0, 0, 0, true, 2});
  check_equivalence<S16>({24, 6, 4, 0, 0, false, 1});           // multi-query, no biases
  check_equivalence<S16>({16, 4, 0, 0, 0, true, 2, 10000.0f});  // grouped-query + RoPE
  check_equivalence<S16>({24, 6, 4, 0, 0, true, 1, 500.0f});    // multi-query + RoPE
}

TEST_CASE("decode_s8 / decode_s16: a windowed cache equals a sliding-window causal forward",
          "[decode][s8][s16]") {
  check_window<S8>();
  check_window<S16>();
}

TEST_CASE("decode_s8 / decode_s16: positions past the RoPE tables", "[decode][errors]") {
  check_rope_limit<S8>();
  check_rope_limit<S16>();
}

TEST_CASE("decode_s8 / decode_s16: full cache, reset and every misuse", "[decode][errors]") {
  check_errors<S8>();
  check_errors<S16>();
}
