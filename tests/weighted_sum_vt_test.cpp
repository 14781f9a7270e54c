// weighted_sum_vt_s8 (P.V over V stored transposed, the DSP targets' arena
// layout): its ref and the dispatched variant against weighted_sum_s8_ref on
// the same values stored [S, d], bit-exact, over odd shapes, strides, zero
// points, key counts past the DSP kernel's 128-key block and saturating
// requantization.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "internal/kernels_fixed.h"

namespace d = attn::detail;

TEST_CASE("weighted_sum_vt_s8 equals weighted_sum_s8 on transposed values", "[fixed][weighted_sum]") {
  std::mt19937 rng(77);
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int iter = 0; iter < 300; ++iter) {
    const int T = uni(1, 9), S = uni(1, 300), D = uni(1, 40);
    const int ps = S + uni(0, 5), vs = D + uni(0, 3), vts = S + uni(0, 3), os = D + uni(0, 3);
    std::vector<int16_t> p(size_t(T) * size_t(ps));
    // Arbitrary rows (as large as keeps the int32 sum exact) or softmax-like ones.
    const int pmax = iter % 3 == 0 ? std::min(32767, (1 << 30) / (256 * S)) : 32767 / S + 1;
    for (int16_t& x : p) x = int16_t(uni(0, pmax));
    std::vector<int8_t> v(size_t(S) * size_t(vs)), vt(size_t(D) * size_t(vts));
    for (int j = 0; j < S; ++j) {
      for (int c = 0; c < D; ++c) {
        const int8_t x = int8_t(iter % 11 == 0 ? -128 : uni(-128, 127));
        v[size_t(j * vs + c)] = x;
        vt[size_t(c * vts + j)] = x;
      }
    }
    const int32_t zv = uni(-128, 127), zo = uni(-128, 127);
    const int32_t m = 0x40000000 + uni(0, 0x3FFFFFFF), sh = uni(-24, 1);
    std::vector<int8_t> a(size_t(T) * size_t(os), 0x5A), b = a, c = a;
    const attn::ConstMatS16 P{p.data(), T, S, ps};
    d::weighted_sum_s8_ref(P, attn::ConstMatS8{v.data(), S, D, vs}, zv, m, sh, zo,
                           attn::MatS8{a.data(), T, D, os});
    d::weighted_sum_vt_s8_ref(P, attn::ConstMatS8{vt.data(), D, S, vts}, zv, m, sh, zo,
                              attn::MatS8{b.data(), T, D, os});
    d::weighted_sum_vt_s8(P, attn::ConstMatS8{vt.data(), D, S, vts}, zv, m, sh, zo,
                          attn::MatS8{c.data(), T, D, os});
    INFO("T=" << T << " S=" << S << " D=" << D << " shift=" << sh);
    REQUIRE(a == b);
    REQUIRE(a == c);
  }
}
