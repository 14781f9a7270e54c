// Conformance: attn::forward_f32 against torch.nn.MultiheadAttention on the
// golden vectors in tests/data/golden (made by tools/fixtures/gen_golden.py).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "golden.h"
#include "golden_checks.h"

namespace {

const std::string kGoldenDir = golden::default_dir();

// A byte buffer holding `bytes` usable bytes at a 16-aligned address, with
// `guard` bytes of a known pattern before and after them.
class GuardedBuffer {
 public:
  static constexpr size_t kGuard = 64;
  static constexpr unsigned char kPattern = 0xA5;

  explicit GuardedBuffer(size_t bytes) : bytes_(bytes), storage_(bytes + 2 * kGuard + ATTN_ARENA_ALIGN) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(storage_.data()) + kGuard;
    const uintptr_t aligned = (p + ATTN_ARENA_ALIGN - 1) & ~static_cast<uintptr_t>(ATTN_ARENA_ALIGN - 1);
    offset_ = static_cast<size_t>(aligned - reinterpret_cast<uintptr_t>(storage_.data()));
    std::memset(storage_.data(), kPattern, storage_.size());
  }
  unsigned char* data() { return storage_.data() + offset_; }
  size_t size() const { return bytes_; }
  // True if every byte outside [data(), data() + size()) still holds the pattern.
  bool guards_intact() const {
    for (size_t i = 0; i < storage_.size(); ++i) {
      if ((i < offset_ || i >= offset_ + bytes_) && storage_[i] != kPattern) return false;
    }
    return true;
  }
  // True if the usable bytes still hold the pattern (nothing was written).
  bool body_untouched() const {
    for (size_t i = offset_; i < offset_ + bytes_; ++i) {
      if (storage_[i] != kPattern) return false;
    }
    return true;
  }

 private:
  size_t bytes_;
  size_t offset_ = 0;
  std::vector<unsigned char> storage_;
};

std::vector<golden::Case> load_all() {
  std::vector<golden::Case> out;
  for (const std::string& path : golden::list_cases(kGoldenDir)) {
    golden::Case c;
    std::string error;
    INFO(path);
    REQUIRE(golden::load(path, &c, &error));
    out.push_back(std::move(c));
  }
  return out;
}

// io for one case; self-attention cases pass the query as key and value, as
// a user would, unless `separate_kv` asks for the stored copies.
attn::IoF32 make_io(const golden::Case& c, float* y, float* p, bool separate_kv = false) {
  attn::IoF32 io;
  io.query = c.query.data();
  const bool alias = c.self_attention && !separate_kv;
  io.key = alias ? c.query.data() : c.key.data();
  io.value = alias ? c.query.data() : c.value.data();
  io.output = y;
  io.attn_weights = p;
  return io;
}

const float kNaN = std::numeric_limits<float>::quiet_NaN();

}  // namespace

TEST_CASE("golden: the case files load and cover the brief", "[golden]") {
  const std::vector<golden::Case> cases = load_all();
  REQUIRE(cases.size() >= 25);
  using C = golden::Case;
  golden::check_covers(cases,
                       {{"self-attention", [](const C& c) { return c.self_attention; }},
                        {"cross-attention", [](const C& c) { return !c.self_attention && c.S != c.L; }},
                        {"L = 1", [](const C& c) { return c.L == 1; }},
                        {"no bias", [](const C& c) { return !c.bias; }},
                        {"causal", [](const C& c) { return c.causal; }},
                        {"key padding", [](const C& c) { return c.key_length >= 0; }},
                        {"kdim or vdim != E", [](const C& c) { return c.kdim != c.E || c.vdim != c.E; }},
                        {"an additive mask", [](const C& c) { return c.has_additive; }},
                        {"H * head_dim != E", [](const C& c) { return c.D() != c.E; }},
                        {"E not a multiple of 4", [](const C& c) { return c.E % 4 != 0; }}});
}

TEST_CASE("golden: forward_f32 matches PyTorch", "[golden]") {
  const std::vector<golden::Case> cases = load_all();
  REQUIRE(!cases.empty());
  golden::Worst worst_y, worst_p;

  for (const golden::Case& c : cases) {
    for (const int32_t tile : {ATTN_TILE_ROWS, 1, 5, 64}) {
      for (const bool separate_kv : {false, true}) {
        if (separate_kv && !c.self_attention) continue;
        INFO(c.name << ": " << c.describe() << ", tile_rows " << tile
                    << (separate_kv ? ", separate k/v" : ""));
        const attn::AttentionConfig cfg = c.config();
        attn::Plan plan;
        REQUIRE(attn::plan_attention(cfg, attn::DType::kF32, c.L, c.S, &plan, tile) == attn::Status::kOk);
        CHECK(attn::attention_arena_bytes(cfg, attn::DType::kF32, c.L, c.S, tile) == plan.arena_bytes);

        GuardedBuffer buf(plan.arena_bytes);
        attn::Arena arena;
        REQUIRE(arena.init(buf.data(), buf.size()) == attn::Status::kOk);

        // NaN-filled outputs: an entry the forward forgets to write fails the bound.
        std::vector<float> y(c.y.size(), kNaN), p(c.attn.size(), kNaN);
        const attn::Status st = attn::forward_f32(plan, c.weights(), c.mask(),
                                                  make_io(c, y.data(), p.data(), separate_kv), arena);
        REQUIRE(attn::status_name(st) == std::string("kOk"));
        CHECK(buf.guards_intact());
        CHECK(arena.used() == 0);

        golden::check_against_torch(c, y, p, &worst_y, &worst_p);

        // Without attention weights the output must be the same, bit for bit.
        if (tile == ATTN_TILE_ROWS && !separate_kv) {
          std::vector<float> y2(c.y.size(), kNaN);
          REQUIRE(attn::forward_f32(plan, c.weights(), c.mask(), make_io(c, y2.data(), nullptr), arena) ==
                  attn::Status::kOk);
          CHECK(std::memcmp(y.data(), y2.data(), y.size() * sizeof(float)) == 0);
        }
      }
    }
  }
  char line[256];
  std::snprintf(
      line, sizeof line,
      "golden: %zu cases, largest error relative to max|torch|: y %.3g (%s), weights %.3g (%s); bound %g",
      cases.size(), worst_y.relative, worst_y.name.c_str(), worst_p.relative, worst_p.name.c_str(),
      golden::kRel);
  WARN(line);
}

TEST_CASE("golden: the arena needs exactly plan.arena_bytes", "[golden][arena]") {
  const std::vector<golden::Case> cases = load_all();
  REQUIRE(!cases.empty());
  for (const golden::Case& c : cases) {
    INFO(c.name << ": " << c.describe());
    attn::Plan plan;
    REQUIRE(attn::plan_attention(c.config(), attn::DType::kF32, c.L, c.S, &plan) == attn::Status::kOk);
    REQUIRE(plan.arena_bytes > 0);

    // Exactly the planned bytes: succeeds, touches nothing outside.
    {
      GuardedBuffer buf(plan.arena_bytes);
      attn::Arena arena;
      REQUIRE(arena.init(buf.data(), buf.size()) == attn::Status::kOk);
      std::vector<float> y(c.y.size(), kNaN), p(c.attn.size(), kNaN);
      REQUIRE(attn::forward_f32(plan, c.weights(), c.mask(), make_io(c, y.data(), p.data()), arena) ==
              attn::Status::kOk);
      CHECK(buf.guards_intact());
      CHECK(golden::compare(y.data(), c.y).ok());
    }
    // One byte less: kArenaTooSmall, and nothing written anywhere (the
    // arena is checked before anything is written).
    {
      GuardedBuffer buf(plan.arena_bytes - 1);
      attn::Arena arena;
      REQUIRE(arena.init(buf.data(), buf.size()) == attn::Status::kOk);
      const float sentinel = 1234.5f;
      std::vector<float> y(c.y.size(), sentinel), p(c.attn.size(), sentinel);
      const attn::Status st =
          attn::forward_f32(plan, c.weights(), c.mask(), make_io(c, y.data(), p.data()), arena);
      CHECK(attn::status_name(st) == std::string("kArenaTooSmall"));
      CHECK(buf.guards_intact());
      CHECK(buf.body_untouched());
      CHECK(arena.used() == 0);
      bool y_untouched = true, p_untouched = true;
      for (float v : y) y_untouched &= v == sentinel;
      for (float v : p) p_untouched &= v == sentinel;
      CHECK(y_untouched);
      CHECK(p_untouched);
    }
  }
}

TEST_CASE("golden: the reader rejects malformed files", "[golden][reader]") {
  const std::vector<std::string> files = golden::list_cases(kGoldenDir);
  REQUIRE(!files.empty());
  // The smallest case file, so the exhaustive loops below stay fast.
  const std::string smallest =
      *std::min_element(files.begin(), files.end(), [](const std::string& a, const std::string& b) {
        return std::filesystem::file_size(a) < std::filesystem::file_size(b);
      });
  const golden::Mutations m(smallest);
  const std::vector<unsigned char>& good = m.good;
  const auto rejects = [&](const std::vector<unsigned char>& bytes, const char* what) {
    m.rejects(bytes, what);
  };
  const auto with_i32 = [&](size_t offset, int32_t v) { return m.with_i32(offset, v); };
  rejects({}, "empty");
  rejects(std::vector<unsigned char>(good.begin(), good.begin() + 40), "short header");
  rejects(std::vector<unsigned char>(good.begin(), good.end() - 1), "truncated by one byte");
  std::vector<unsigned char> longer = good;
  longer.push_back(0);
  rejects(longer, "one trailing byte");
  std::vector<unsigned char> magic = good;
  magic[0] = 'X';
  rejects(magic, "bad magic");
  std::vector<unsigned char> end = good;
  if (end.size() > 4) end[end.size() - 1] = static_cast<unsigned char>(0x58);
  rejects(end, "bad end marker");
  rejects(with_i32(8, 0), "version 0");
  rejects(with_i32(8, 3), "version 3");
  rejects(with_i32(12, 0), "E = 0");
  rejects(with_i32(12, -5), "E < 0");
  rejects(with_i32(16, 1 << 30), "huge H");
  rejects(with_i32(36, 0x7fffffff), "huge L");
  rejects(with_i32(32, 2), "bias flag 2");
  rejects(with_i32(52, -2), "key_length -2");
  rejects(with_i32(48, -1), "negative causal_offset");
  // Bytes 0..43 (magic, version, dims, bias, L, S) and has_additive decide the
  // file size, so a change there must be rejected; the other mask fields may
  // still describe a valid case.
  m.check_truncations_and_flips(golden::kHeaderBytes, [](size_t i) { return i < 44 || (i >= 56 && i < 60); });
  golden::Case c;
  std::string error;
  CHECK_FALSE(golden::load(kGoldenDir + "/no_such_case.bin", &c, &error));
  CHECK(golden::list_cases(kGoldenDir + "/no_such_folder").empty());
}
