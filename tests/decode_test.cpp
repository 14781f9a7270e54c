// decode_f32 over a KV cache computes what one causal forward_f32 computes.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "attn/decode.h"
#include "catch_helpers.h"
#include "host_helpers.h"

namespace {

using attn::Status;

struct Model {
  attn::AttentionConfig cfg;
  std::vector<float> wq, wk, wv, wo, bq, bk, bv, bo;
  attn::WeightsF32 weights() const {
    return {wq.data(), wk.data(), wv.data(), wo.data(), bq.data(), bk.data(), bv.data(), bo.data()};
  }
};

Model make_model(attn::AttentionConfig cfg, uint32_t seed) {
  std::mt19937 rng(seed);
  const size_t E = size_t(cfg.embed_dim), D = size_t(cfg.inner_dim()), Dkv = size_t(cfg.kv_dim());
  const float ws = 1.0f / std::sqrt(float(E));
  return Model{cfg,
               random_normal(D * E, rng, ws),
               random_normal(Dkv * E, rng, ws),
               random_normal(Dkv * E, rng, ws),
               random_normal(E * D, rng, ws),
               random_normal(D, rng, 0.1f),
               random_normal(Dkv, rng, 0.1f),
               random_normal(Dkv, rng, 0.1f),
               random_normal(E, rng, 0.1f)};
}

// The error tests' setup: a decode plan for m (2 query rows, a cache of
// `max_len` rows), a 4 KiB arena, an uninitialised cache and `rows` rows of
// input (0.5) and output.
struct DecodeRig {
  Model m;
  attn::Plan plan;
  AlignedBuffer buf{4096};
  attn::Arena arena;
  attn::KvCacheF32 cache;
  std::vector<float> x, y;
  DecodeRig(Model model, int32_t max_len, int rows)
      : m(std::move(model)), x(size_t(rows) * 8, 0.5f), y(size_t(rows) * 8) {
    REQUIRE(attn::plan_decode(m.cfg, attn::DType::kF32, 2, max_len, &plan) == Status::kOk);
    REQUIRE(arena.init(buf.data, 4096) == Status::kOk);
  }
  Status init_cache(int32_t window) { return attn::kv_cache_init_f32(plan, window, arena, &cache); }
  // decode_f32 of the first `n` rows of x.
  Status decode(int32_t n) {
    return attn::decode_f32(plan, m.weights(), &cache, x.data(), n, y.data(), arena);
  }
};

// y of one forward_f32 over all L rows, causal (and windowed).
std::vector<float> full_forward(const Model& m, const std::vector<float>& x, int L, int window) {
  return causal_forward(m.cfg, attn::DType::kF32, m.weights(), x, L, window, attn::forward_f32);
}

bool within_bound(const std::vector<float>& got, const std::vector<float>& want) {
  double max_ref = 0, max_err = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    max_ref = std::fmax(max_ref, std::fabs(want[i]));
    max_err = std::fmax(max_err, std::fabs(double(got[i]) - want[i]));
  }
  INFO("max err " << max_err << ", max |want| " << max_ref);
  return max_err <= 1e-5 * max_ref + 1e-6;
}

// Feed x through a cache: `prefill` rows in one call, then `step` rows per call.
// With `packed`, on the weights packed once by pack_weights_f32().
std::vector<float> decode_all(const Model& m, const std::vector<float>& x, int L, int capacity, int window,
                              int prefill, int step, bool packed = false) {
  const int max_rows = prefill > step ? prefill : step;
  attn::Plan plan;
  REQUIRE(attn::plan_decode(m.cfg, attn::DType::kF32, max_rows, capacity, &plan) == Status::kOk);
  REQUIRE(plan.arena_bytes == attn::decode_arena_bytes(m.cfg, attn::DType::kF32, max_rows, capacity));
  const size_t cache_bytes = attn::kv_cache_arena_bytes(m.cfg, attn::DType::kF32, capacity);
  AlignedBuffer buf(cache_bytes + plan.arena_bytes);
  attn::Arena arena;
  REQUIRE(arena.init(buf.data, cache_bytes + plan.arena_bytes) == Status::kOk);
  attn::KvCacheF32 cache;
  REQUIRE(attn::kv_cache_init_f32(plan, window, arena, &cache) == Status::kOk);
  REQUIRE(arena.used() == cache_bytes);
  attn::WeightsF32 w = m.weights();
  size_t packed_bytes = 0;
  REQUIRE(attn::pack_weights_f32_storage_bytes(plan, &packed_bytes) == Status::kOk);
  AlignedBuffer panels(packed_bytes);
  if (packed) REQUIRE(attn::pack_weights_f32(plan, w, panels.data, packed_bytes, &w) == Status::kOk);
  const int E = m.cfg.embed_dim;
  std::vector<float> y(x.size());
  for (int r = 0; r < L;) {
    const int n = r == 0 && prefill > 0 ? std::min(prefill, L) : std::min(step, L - r);
    REQUIRE(attn::decode_f32(plan, w, &cache, x.data() + r * E, n, y.data() + r * E, arena) == Status::kOk);
    r += n;
    REQUIRE(cache.next_position() == r);
  }
  REQUIRE(arena.used() == cache_bytes);  // decode gives its scratch back
  return y;
}

}  // namespace

TEST_CASE("decoding token by token equals one causal forward", "[decode][f32]") {
  const attn::AttentionConfig configs[] = {
      {16, 4},                              // plain multi-head
      {16, 4, 0, 0, 0, true, 2, 10000.0f},  // grouped-query + rotary (Llama-style)
      {24, 6, 4, 0, 0, true, 1, 500.0f},    // multi-query + rotary
  };
  for (const auto& cfg : configs) {
    const Model m = make_model(cfg, 17);
    const int L = 23;
    std::mt19937 rng(5);
    const auto x = random_normal(size_t(L) * cfg.embed_dim, rng, 1.0f);
    const auto want = full_forward(m, x, L, 0);
    CHECK(within_bound(decode_all(m, x, L, L, 0, 0, 1), want));   // one row at a time
    CHECK(within_bound(decode_all(m, x, L, 32, 0, 9, 1), want));  // prefill 9, then one at a time
    CHECK(within_bound(decode_all(m, x, L, L, 0, L, 1), want));   // everything in one prefill
    CHECK(within_bound(decode_all(m, x, L, 40, 0, 0, 3), want));  // three rows per call
  }
}

TEST_CASE("a windowed cache equals a sliding-window causal forward", "[decode][f32]") {
  const Model m = make_model({16, 4, 0, 0, 0, true, 2, 10000.0f}, 23);
  const int L = 30;
  std::mt19937 rng(6);
  const auto x = random_normal(size_t(L) * 16, rng, 1.0f);
  for (int window : {1, 4, 8}) {
    const auto want = full_forward(m, x, L, window);
    CHECK(within_bound(decode_all(m, x, L, window, window, 0, 1), want));      // capacity == window
    CHECK(within_bound(decode_all(m, x, L, window + 5, window, 6, 2), want));  // prefill through the ring
  }
}

TEST_CASE("decoding on packed weights gives the bits of the weights as stored", "[decode][f32]") {
  const Model m = make_model({32, 4, 0, 0, 0, true, 2, 10000.0f}, 29);
  const int L = 21;
  std::mt19937 rng(8);
  const auto x = random_normal(size_t(L) * 32, rng, 1.0f);
  for (int step : {1, 5}) {  // one row (W as stored) and chunks of 5 (panels)
    const auto plain = decode_all(m, x, L, 24, 0, 9, step);
    const auto packed = decode_all(m, x, L, 24, 0, 9, step, true);
    REQUIRE(std::memcmp(packed.data(), plain.data(), plain.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("decode reports a full cache, bad rows and a foreign plan", "[decode][errors]") {
  DecodeRig r(make_model({8, 2}, 3), 4, 3);
  CHECK(r.init_cache(5) == Status::kBadWindow);
  REQUIRE(r.init_cache(0) == Status::kOk);
  CHECK(r.decode(3) == Status::kBadQueryLength);
  CHECK(r.decode(0) == Status::kBadQueryLength);
  REQUIRE(r.decode(2) == Status::kOk);
  REQUIRE(r.decode(2) == Status::kOk);
  CHECK(r.decode(1) == Status::kCacheFull);
  CHECK(r.cache.length == 4);  // nothing changed
  REQUIRE(attn::kv_cache_reset(&r.cache) == Status::kOk);
  CHECK(r.decode(1) == Status::kOk);
  CHECK(attn::decode_f32(r.plan, r.m.weights(), nullptr, r.x.data(), 1, r.y.data(), r.arena) ==
        Status::kNullArgument);

  attn::Plan forward_plan;
  REQUIRE(attn::plan_attention(r.m.cfg, attn::DType::kF32, 2, 4, &forward_plan) == Status::kOk);
  CHECK(attn::decode_f32(forward_plan, r.m.weights(), &r.cache, r.x.data(), 1, r.y.data(), r.arena) ==
        Status::kPlanMismatch);
  const float* x = r.x.data();
  CHECK(attn::forward_f32(r.plan, r.m.weights(), {}, {x, x, x, r.y.data()}, r.arena) ==
        Status::kPlanMismatch);
  CHECK(attn::plan_decode({8, 2, 0, 4}, attn::DType::kF32, 1, 4, &r.plan) == Status::kBadKeyDim);
}

TEST_CASE("a windowed cache stops at the last int32 position instead of overflowing it", "[decode][errors]") {
  // A sliding window decodes forever; its positions (start + length) count up
  // by one per row. Near INT32_MAX (about 2^31 decoded rows) the next rows
  // would overflow int32: refused with kSequenceTooLong, the cache unchanged.
  DecodeRig r(make_model({8, 2}, 4), 3, 2);
  REQUIRE(r.init_cache(3) == Status::kOk);
  REQUIRE(r.decode(2) == Status::kOk);
  REQUIRE(r.decode(2) == Status::kOk);
  REQUIRE(r.cache.length == 3);
  // Where 2^31 - 4 rows of decoding leave a full window of 3 rows.
  r.cache.start = INT32_MAX - 4;
  REQUIRE(r.cache.next_position() == INT32_MAX - 1);
  CHECK(r.decode(1) == Status::kOk);
  CHECK(r.cache.next_position() == INT32_MAX);  // the last position a row can take is INT32_MAX - 1
  CHECK(r.decode(1) == Status::kSequenceTooLong);
  CHECK(r.decode(2) == Status::kSequenceTooLong);
  CHECK(r.cache.start == INT32_MAX - 3);  // nothing changed
  CHECK(r.cache.length == 3);
  REQUIRE(attn::kv_cache_reset(&r.cache) == Status::kOk);  // a reset starts again at position 0
  CHECK(r.decode(2) == Status::kOk);
  CHECK(r.cache.next_position() == 2);
}
