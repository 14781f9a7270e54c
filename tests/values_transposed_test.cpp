// The ref arithmetic of forward_s8's values-transposed P.V path (the DSP
// targets'): softmax_exps_row_ref + fused_prob give softmax_fused_row_ref's
// probabilities, and weighted_sum_vt_s8_ref (V stored transposed, P as exps
// and per-row normalizers) equals weighted_sum_s8_ref over those
// probabilities and V stored [S, d], bit-exact: odd shapes, strides, masked
// ranges, keys past diff_limit, zero points, key counts past the DSP kernel's
// 128-key block. The variants of both are tested against these refs in
// tests/variants_test.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "variant_tester.h"

namespace d = attn::detail;

namespace {

// The converter's softmax constants (the largest diff_limit with t < 2^20).
d::FusedSoftmax random_softmax(std::mt19937& rng) {
  attn::variant_tester::Rng r(rng());
  return attn::variant_tester::random_softmax(r);
}

}  // namespace

TEST_CASE("softmax_exps_row + fused_prob equal softmax_fused_row", "[fixed][softmax]") {
  std::mt19937 rng(31);
  for (int iter = 0; iter < 400; ++iter) {
    const d::FusedSoftmax sm = random_softmax(rng);
    const int n = 1 + int(rng() % 300);
    const int begin = iter % 4 == 0 ? int(rng() % unsigned(n)) : 0;
    const int end = iter % 5 == 0 ? begin + int(rng() % unsigned(n - begin + 1)) : n;
    const int32_t spread = int32_t(std::min<uint32_t>(uint32_t(sm.diff_limit) * 2u + 1u, 1u << 29));
    std::vector<int32_t> a(static_cast<size_t>(n));
    for (int32_t& s : a) s = int32_t(rng() % uint32_t(spread)) - (1 << 27);
    std::vector<int32_t> b = a;
    d::softmax_fused_row_ref(a.data(), begin, end, n, sm);
    const uint32_t recip = d::softmax_exps_row_ref(b.data(), begin, end, n, sm);
    INFO("n=" << n << " begin=" << begin << " end=" << end);
    for (int j = 0; j < n; ++j) {
      int16_t p;
      std::memcpy(&p, reinterpret_cast<const unsigned char*>(a.data()) + 2 * j, sizeof p);
      REQUIRE(int32_t(p) == d::fused_prob(uint32_t(b[size_t(j)]), recip));
    }
  }
}

TEST_CASE("weighted_sum_vt_s8 equals weighted_sum_s8 on transposed values", "[fixed][weighted_sum]") {
  std::mt19937 rng(77);
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int iter = 0; iter < 300; ++iter) {
    const int T = uni(1, 9), S = uni(1, 300), D = uni(1, 40);
    const int es = S + uni(0, 5), vs = D + uni(0, 3), vts = S + uni(0, 3), os = D + uni(0, 3);
    const d::FusedSoftmax sm = random_softmax(rng);
    const int32_t spread = int32_t(std::min<uint32_t>(uint32_t(sm.diff_limit) * 2u + 1u, 1u << 29));
    std::vector<int32_t> e(size_t(T) * size_t(es));
    std::vector<uint32_t> recip(static_cast<size_t>(T));
    std::vector<int16_t> p(size_t(T) * size_t(S));
    for (int t = 0; t < T; ++t) {
      int32_t* row = e.data() + size_t(t) * size_t(es);
      for (int j = 0; j < S; ++j) row[j] = int32_t(rng() % uint32_t(spread));
      const int begin = iter % 3 == 0 ? uni(0, S) : 0;
      const int end = iter % 3 == 0 ? uni(begin, S) : S;
      recip[size_t(t)] = d::softmax_exps_row_ref(row, begin, end, S, sm);
      for (int j = 0; j < S; ++j)
        p[size_t(t * S + j)] = int16_t(d::fused_prob(uint32_t(row[j]), recip[size_t(t)]));
    }
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
    std::vector<int8_t> a(size_t(T) * size_t(os), 0x5A), b = a;
    const attn::ConstMatS32 E{e.data(), T, S, es};
    const attn::ConstMatS8 VT{vt.data(), D, S, vts};
    d::weighted_sum_s8_ref(attn::ConstMatS16{p.data(), T, S, S}, attn::ConstMatS8{v.data(), S, D, vs}, zv,
                           d::Requant{m, sh, zo}, attn::MatS8{a.data(), T, D, os});
    d::weighted_sum_vt_s8_ref(E, recip.data(), VT, zv, d::Requant{m, sh, zo},
                              attn::MatS8{b.data(), T, D, os});
    INFO("T=" << T << " S=" << S << " D=" << D << " shift=" << sh);
    REQUIRE(a == b);
  }
}
