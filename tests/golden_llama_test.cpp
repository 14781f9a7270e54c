// Conformance of the Llama-style cases in tests/data/golden (llama_*.bin,
// format version 2): grouped/multi-query attention with rotary embeddings,
// causal and sliding-window masks, against the float64 PyTorch reference of
// HF LlamaAttention in tools/fixtures/gen_golden.py. Each case runs through one causal
// forward_f32 and through decode_f32 over a KV cache (token by token, after a
// prefill, a few rows per call), always within the golden bound
// max|y - y_torch| <= 1e-5 * max|y_torch| + 1e-6.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/decode.h"
#include "golden.h"
#include "golden_checks.h"
#include "host_helpers.h"

namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<golden::Case> load_llama() {
  std::vector<golden::Case> out;
  for (const std::string& path : golden::list_cases(golden::default_dir())) {
    golden::Case c;
    std::string error;
    INFO(path << ": " << error);
    REQUIRE(golden::load(path, &c, &error));
    if (c.llama()) out.push_back(std::move(c));
  }
  return out;
}

// Golden cases decode_f32 can reproduce: self-attention, causal from position
// 0, no key padding and no additive mask (the Llama cases and plain causal ones).
std::vector<golden::Case> load_decodable() {
  std::vector<golden::Case> out;
  for (const std::string& path : golden::list_cases(golden::default_dir())) {
    golden::Case c;
    std::string error;
    REQUIRE(golden::load(path, &c, &error));
    if (c.self_attention && c.causal && c.causal_offset == 0 && c.key_length < 0 && !c.has_additive) {
      out.push_back(std::move(c));
    }
  }
  return out;
}

// How rows are fed: `prefill` rows in the first call (0: none), then `step`
// rows per call, through a cache of `capacity` rows (0: L).
struct Schedule {
  int32_t prefill;
  int32_t step;
  int32_t capacity;
  const char* what;
};

// y [L, E] of decode_f32 over the case's query rows; false if a call fails.
std::vector<float> decode_case(const golden::Case& c, const Schedule& sch) {
  const int32_t L = c.L, E = c.E;
  const int32_t capacity = sch.capacity > 0 ? sch.capacity : L;
  const int32_t first = sch.prefill > 0 ? std::min(sch.prefill, L) : std::min(sch.step, L);
  const int32_t max_rows = std::max(first, std::min(sch.step, L));
  attn::Plan plan;
  REQUIRE(attn::plan_decode(c.config(), attn::DType::kF32, max_rows, capacity, &plan) == attn::Status::kOk);
  const size_t cache_bytes = attn::kv_cache_arena_bytes(c.config(), attn::DType::kF32, capacity);
  AlignedBuffer buf(cache_bytes + plan.arena_bytes);
  attn::Arena arena;
  REQUIRE(arena.init(buf.data, cache_bytes + plan.arena_bytes) == attn::Status::kOk);
  attn::KvCacheF32 cache;
  REQUIRE(attn::kv_cache_init_f32(plan, c.window, arena, &cache) == attn::Status::kOk);

  std::vector<float> y(static_cast<size_t>(L) * static_cast<size_t>(E), kNaN);  // [L, E]
  for (int32_t r = 0; r < L;) {
    const int32_t n = r == 0 ? first : std::min(sch.step, L - r);
    const attn::Status st = attn::decode_f32(plan, c.weights(), &cache, c.query.data() + ptrdiff_t{r} * E, n,
                                             y.data() + ptrdiff_t{r} * E, arena);
    INFO("rows " << r << " .. " << r + n - 1);
    REQUIRE(attn::status_name(st) == std::string("kOk"));
    r += n;
    REQUIRE(cache.next_position() == r);
    // Without a window every row stays cached; with one, at most capacity.
    REQUIRE(cache.length == (c.window == 0 ? r : std::min(r, capacity)));
  }
  REQUIRE(arena.used() == cache_bytes);
  return y;
}

}  // namespace

TEST_CASE("golden llama: the cases cover GQA, MQA, MHA+RoPE, stories260K, windows, lengths",
          "[golden][llama]") {
  const std::vector<golden::Case> cases = load_llama();
  REQUIRE(cases.size() >= 8);
  for (const golden::Case& c : cases) {
    INFO(c.name << ": " << c.describe());
    // Llama attention: self-attention, no biases, causal from position 0, rotary.
    CHECK(c.self_attention);
    CHECK_FALSE(c.bias);
    CHECK(c.causal);
    CHECK(c.causal_offset == 0);
    CHECK(c.key_length == -1);
    CHECK_FALSE(c.has_additive);
    CHECK(c.rope_base > 0);
  }
  using C = golden::Case;
  const auto stories = [](const C& c) {  // stories260K's attention
    return c.E == 64 && c.H == 8 && c.kv_heads == 4 && c.head_dim == 8 && c.rope_base == 10000.0f;
  };
  golden::check_covers(
      cases, {{"GQA", [](const C& c) { return c.kv_heads > 1 && c.kv_heads < c.H; }},
              {"MQA", [](const C& c) { return c.kv_heads == 1 && c.H > 1; }},
              {"MHA with RoPE", [](const C& c) { return c.kv_heads == c.H; }},
              {"stories260K", stories},
              {"stories260K, L = 33", [&](const C& c) { return stories(c) && c.L == 33; }},
              {"a window shorter than L", [](const C& c) { return c.window > 0 && c.window < c.L; }},
              {"rope_base 500000", [](const C& c) { return c.rope_base == 500000.0f; }},
              {"L = 1", [](const C& c) { return c.L == 1; }},
              {"L = 7", [](const C& c) { return c.L == 7; }},
              {"L = 33", [](const C& c) { return c.L == 33; }}});
}

TEST_CASE("golden llama: one causal forward_f32 matches the PyTorch Llama attention", "[golden][llama]") {
  const std::vector<golden::Case> cases = load_llama();
  REQUIRE(!cases.empty());
  golden::Worst worst, worst_p;
  for (const golden::Case& c : cases) {
    for (const int32_t tile : {ATTN_TILE_ROWS, 1, 5}) {
      INFO(c.name << ": " << c.describe() << ", tile_rows " << tile);
      attn::Plan plan;
      REQUIRE(attn::plan_attention(c.config(), attn::DType::kF32, c.L, c.L, &plan, tile) ==
              attn::Status::kOk);
      AlignedBuffer buf(plan.arena_bytes);
      attn::Arena arena;
      REQUIRE(arena.init(buf.data, plan.arena_bytes) == attn::Status::kOk);
      std::vector<float> y(c.y.size(), kNaN), p(c.attn.size(), kNaN);  // [L, E], [H, L, L]
      attn::IoF32 io;
      io.query = io.key = io.value = c.query.data();
      io.output = y.data();
      io.attn_weights = p.data();
      REQUIRE(attn::forward_f32(plan, c.weights(), c.mask(), io, arena) == attn::Status::kOk);
      golden::check_against_torch(c, y, p, &worst, &worst_p);
    }
  }
  char line[200];
  std::snprintf(line, sizeof line,
                "golden llama forward: %zu cases, largest y error / max|y_torch| %.3g (%s)", cases.size(),
                worst.relative, worst.name.c_str());
  WARN(line);
}

TEST_CASE("golden llama: decode_f32 over a KV cache matches the PyTorch Llama attention",
          "[golden][llama][decode]") {
  const std::vector<golden::Case> cases = load_decodable();
  REQUIRE(cases.size() >= 9);  // the Llama cases and the plain causal self-attention ones
  double worst = 0;
  std::string worst_case;
  for (const golden::Case& c : cases) {
    const int32_t L = c.L, W = c.window;
    std::vector<Schedule> schedules = {
        {0, 1, 0, "token by token"},
        {L / 2, 1, 0, "prefill L/2, then token by token"},
        {L, 1, 0, "all rows in one prefill"},
        {0, 3, L + 8, "three rows per call, spare capacity"},
        {5, 4, 0, "prefill 5, then four rows per call"},
    };
    if (W > 0) {
      schedules.push_back({0, 1, W, "token by token, capacity == window (ring)"});
      schedules.push_back({std::min(L, W + 3), 1, W, "prefill past the window, capacity == window"});
      schedules.push_back({std::min(L, 6), 2, W + 5, "prefill 6, two rows per call, capacity window + 5"});
    }
    for (const Schedule& sch : schedules) {
      INFO(c.name << ": " << c.describe() << "; " << sch.what << " (prefill " << sch.prefill << ", step "
                  << sch.step << ", capacity " << (sch.capacity > 0 ? sch.capacity : L) << ")");
      const std::vector<float> y = decode_case(c, sch);
      const golden::Error e = golden::compare(y.data(), c.y);
      INFO("max abs err " << e.max_abs << ", bound " << e.bound() << ", max|y_torch| " << e.max_want);
      CHECK(e.ok());
      if (e.relative() > worst) {
        worst = e.relative();
        worst_case = c.name + " (" + sch.what + ")";
      }
    }
  }
  char line[240];
  std::snprintf(line, sizeof line, "golden decode: %zu cases, largest y error / max|y_torch| %.3g (%s)",
                cases.size(), worst, worst_case.c_str());
  WARN(line);
}

TEST_CASE("golden llama: the reader checks the version-2 header", "[golden][llama][reader]") {
  // The smallest version-2 file.
  std::string smallest;
  for (const std::string& path : golden::list_cases(golden::default_dir())) {
    golden::Case c;
    if (golden::load(path, &c, nullptr) && c.version == 2 &&
        (smallest.empty() || std::filesystem::file_size(path) < std::filesystem::file_size(smallest))) {
      smallest = path;
    }
  }
  REQUIRE(!smallest.empty());
  const golden::Mutations m(smallest);
  REQUIRE(m.parsed.llama());
  INFO(m.parsed.describe());
  const auto with_i32 = [&](size_t offset, int32_t v) { return m.with_i32(offset, v); };
  const auto with_f32 = [&](size_t offset, float v) { return m.with_f32(offset, v); };
  const auto rejects = [&](const std::vector<unsigned char>& bytes, const char* what) {
    m.rejects(bytes, what);
  };
  rejects(with_i32(8, 1), "read as version 1");
  rejects(with_i32(64, 0), "kv_heads 0");
  rejects(with_i32(64, -1), "kv_heads -1");
  rejects(with_i32(64, 3), "kv_heads not dividing H");
  rejects(with_f32(68, -1.0f), "negative rope_base");
  rejects(with_f32(68, std::numeric_limits<float>::infinity()), "infinite rope_base");
  rejects(with_f32(68, kNaN), "NaN rope_base");
  rejects(with_i32(72, -1), "negative window");
  std::vector<unsigned char> acausal = with_i32(72, 1);  // window 1 ...
  acausal[44] = 0;                                       // ... and causal 0
  rejects(acausal, "window without causal");
  rejects(with_i32(76, 1), "reserved field 1");
  // Bytes 0..43, has_additive (56..59) and kv_heads (64..67) decide the file
  // size: a change there must be rejected. No byte may crash the reader.
  m.check_truncations_and_flips(
      golden::kHeaderBytesV2, [](size_t i) { return i < 44 || (i >= 56 && i < 60) || (i >= 64 && i < 68); });
}
