// fast::Requant (kernels/requantize.h): the per-channel folded requantization
// of the DSP kernels gives fast::requantize's bits for every shift, multiplier
// >= 0 and int32 input, edge values included.
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/requantize.h"

using attn::detail::fast::Requant;
using attn::detail::fast::requantize;

TEST_CASE("fast::Requant equals fast::requantize", "[fixed][requant]") {
  std::mt19937 rng(2024);
  std::uniform_int_distribution<int32_t> any(INT32_MIN, INT32_MAX);
  std::uniform_int_distribution<int32_t> mult(0, INT32_MAX);
  const std::vector<int32_t> edge_x = {
      0,     1,      -1,  2,   -2, INT32_MAX, INT32_MIN, 1 << 30, -(1 << 30), (1 << 30) - 1, -(1 << 30) + 1,
      12345, -12345, 255, -256};
  const std::vector<int32_t> edge_m = {0, 1, 2, 1 << 30, INT32_MAX, 0x40000000 + 1, 0x7FFF0000};
  int64_t checked = 0;
  for (int32_t shift = -31; shift <= 30; ++shift) {
    std::vector<int32_t> ms = edge_m;
    for (int i = 0; i < 40; ++i) ms.push_back(mult(rng));
    for (int32_t m : ms) {
      const Requant rq(m, shift);
      std::vector<int32_t> xs = edge_x;
      for (int i = 0; i < 200; ++i) xs.push_back(any(rng));
      // Around the [x < 0] / [v < 0] boundary: x m near -2^30.
      if (m > 0) {
        const int64_t x0 = -(int64_t{1} << 30) / m;
        for (int64_t d = -3; d <= 3; ++d) {
          const int64_t x = x0 + d;
          if (x >= INT32_MIN && x <= INT32_MAX) xs.push_back(static_cast<int32_t>(x));
        }
      }
      for (int32_t x : xs) {
        INFO("x=" << x << " m=" << m << " shift=" << shift);
        REQUIRE(rq(x) == requantize(x, m, shift));
        ++checked;
      }
    }
  }
  CHECK(checked > 100000);
}
