// rope_fixed_test.cpp: the integer rotary embedding (rope_s8 / rope_s16, the
// converter's tables) on hand-computed cases: pairing (i, i + head_dim/2) per
// head, positions, zero points, rounding ties (half away from zero),
// saturation, int64 products; and the table the converter writes.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "attn/arena.h"
#include "attn/attention_fixed.h"
#include "attn/quantize.h"
#include "kernels/kernel_table.h"

namespace {

namespace d = attn::detail;

// Tables of 2 positions for head_dim 4 (2 pairs). Position 0 is not used by
// the cases (they run at pos0 = 1): its row is garbage that must not be read.
// Position 1: pair 0 turns by 90 degrees (cos 0, sin 1); pair 1 by
// (cos, sin) = (0.5, 0.5), which is not a rotation but shows both products.
const std::vector<int16_t> kCos = {-999, 999, 0, 8192};
const std::vector<int16_t> kSin = {777, -777, 16384, 8192};
const attn::RopeTable kTable{kCos.data(), kSin.data(), 2};

}  // namespace

TEST_CASE("rope_s8: pairs (i, i + hd/2) per head, zero point, ties away from zero", "[rope_fixed]") {
  // One row at position 1, two heads of head_dim 4, zero point 10.
  std::vector<int8_t> x = {20, 30, 40, 50,   // head 0: pairs (a, b) = (10, 30) and (20, 40)
                           11, 9,  10, 10};  // head 1: pairs (1, 0) and (-1, 0)
  d::rope_s8_ref(attn::MatS8{x.data(), 1, 8, 8}, 4, 10, 1, kTable);
  // Head 0, pair 0: (10 * 0 - 30 * 1, 30 * 0 + 10 * 1) = (-30, 10); pair 1: ((20 - 40) / 2, (40 + 20) / 2).
  // Head 1, pair 0: (0, 1); pair 1: (-0.5, -0.5) -> (-1, -1), away from zero.
  const std::vector<int8_t> want = {10 - 30, 10 - 10, 10 + 10, 10 + 30, 10 + 0, 10 - 1, 10 + 1, 10 - 1};
  CHECK(x == want);
  // Positive ties: pair 1 (t[1], t[3]) = (1, 0) by (0.5, 0.5) -> (0.5, 0.5) -> (1, 1).
  std::vector<int8_t> t = {0, 1, 0, 0};
  d::rope_s8_ref(attn::MatS8{t.data(), 1, 4, 4}, 4, 0, 1, kTable);
  CHECK(t == std::vector<int8_t>{0, 1, 0, 1});
}

TEST_CASE("rope_s8: rows at consecutive positions, saturation at the int8 limits", "[rope_fixed]") {
  // cos = sin = 1 (16384) at position 2: (a, b) -> (a - b, a + b), which leaves the range.
  const std::vector<int16_t> cos = {0, 0, 16384, 16384, 16384}, sin = {0, 0, 0, 0, 16384};
  const attn::RopeTable t{cos.data(), sin.data(), 5};  // head_dim 2: one pair per position
  // zp -128: rows at positions 2 (identity), 3 (identity), 4 ((a, b) -> (a - b, a + b)).
  std::vector<int8_t> x = {127, -128, 5, 6, 127, 127};
  d::rope_s8_ref(attn::MatS8{x.data(), 3, 2, 2}, 2, -128, 2, t);
  // Row 2: a = b = 255: (0, 510) -> (-128, 127 saturated).
  CHECK(x == std::vector<int8_t>{127, -128, 5, 6, -128, 127});
}

TEST_CASE("rope_s16: symmetric rows, saturation, int64 products", "[rope_fixed]") {
  const std::vector<int16_t> cos = {16384, -32768}, sin = {16384, -32768};
  const attn::RopeTable t{cos.data(), sin.data(), 2};  // head_dim 2
  std::vector<int16_t> x = {32767, -32768};            // position 0: (a - b, a + b) = (65535, -1)
  d::rope_s16_ref(attn::MatS16{x.data(), 1, 2, 2}, 2, 0, t);
  CHECK(x == std::vector<int16_t>{32767, -1});
  // Entries of -2 (outside what the converter writes; the kernel stays exact):
  // a = b = -32768 at position 1: (a c - b s, b c + a s) / 2^14 = (0, 2^17) -> (0, 32767).
  x = {-32768, -32768};
  d::rope_s16_ref(attn::MatS16{x.data(), 1, 2, 2}, 2, 1, t);
  CHECK(x == std::vector<int16_t>{0, 32767});
  // Ties: (3, 0) by (cos, sin) = (0.5, 0.5) -> (1.5, 1.5) -> (2, 2); (-3, 0) -> (-2, -2).
  const std::vector<int16_t> half = {8192}, halfs = {8192};
  const attn::RopeTable th{half.data(), halfs.data(), 1};
  std::vector<int16_t> y = {3, 0, -3, 0};  // two heads of head_dim 2
  d::rope_s16_ref(attn::MatS16{y.data(), 1, 4, 4}, 2, 0, th);
  CHECK(y == std::vector<int16_t>{2, 2, -2, -2});
}

TEST_CASE("rope_table: Q1.14 cos/sin of p * base^(-2i/hd), HF Llama's frequencies", "[rope_fixed]") {
  alignas(16) static unsigned char mem[4096];
  attn::Arena st;
  REQUIRE(st.init(mem, sizeof mem) == attn::Status::kOk);
  attn::RopeTable t;
  REQUIRE(attn::rope_table(10000.0f, 8, 50, st, &t) == attn::Status::kOk);
  REQUIRE(t.positions == 50);
  for (int p = 0; p < 50; ++p) {
    for (int i = 0; i < 4; ++i) {
      const double angle = p * std::pow(10000.0, -2.0 * i / 8);
      const size_t at = size_t(p) * 4 + size_t(i);
      CHECK(std::fabs(t.cos[at] - 16384.0 * std::cos(angle)) <= 0.5);
      CHECK(std::fabs(t.sin[at] - 16384.0 * std::sin(angle)) <= 0.5);
    }
  }
  CHECK(t.cos[0] == 16384);
  CHECK(t.sin[0] == 0);
  CHECK(t.cos[4 * 7] == 12352);  // round(16384 cos 7) = round(12351.93)
  attn::RopeTable bad;
  CHECK(attn::rope_table(10000.0f, 7, 4, st, &bad) == attn::Status::kBadRope);
  CHECK(attn::rope_table(-1.0f, 8, 4, st, &bad) == attn::Status::kBadRope);
  CHECK(attn::rope_table(10000.0f, 8, 0, st, &bad) == attn::Status::kBadQuantParams);
  CHECK(attn::rope_table(10000.0f, 8, 1000, st, &bad) == attn::Status::kArenaTooSmall);
  CHECK(attn::rope_table(10000.0f, 8, 4, st, nullptr) == attn::Status::kNullArgument);
}
