// The fused-attention internals (scores, weighted sum) against straightforward
// int64 re-implementations of their documented arithmetic, over random
// shapes, strides and parameters.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "attn/quantize.h"
#include "kernels/kernels_fixed.h"

namespace {

int64_t round_shift(int64_t x, int s) { return s == 0 ? x : (x + (int64_t{1} << (s - 1))) >> s; }  // half up

// MultiplyByQuantizedMultiplier in int64: round_half_up(x 2^left m / 2^31), then round half away by 2^right.
int64_t mbqm(int64_t x, int32_t m, int shift) {
  const int64_t hi = (x * (int64_t{1} << std::max(shift, 0)) * m + (int64_t{1} << 30)) >> 31;
  const int r = std::max(-shift, 0);
  if (r == 0) return hi;
  const int64_t half = int64_t{1} << (r - 1);
  return hi >= 0 ? (hi + half) >> r : -((-hi + half) >> r);
}

template <class T>
std::vector<T> random_vec(size_t n, std::mt19937& rng) {
  std::uniform_int_distribution<int> d(INT16_MIN, INT16_MAX);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(sizeof(T) == 1 ? d(rng) >> 8 : d(rng));
  return v;
}

TEST_CASE("scores_s8 / scores_s16 match int64 dot products", "[attention_kernels_fixed]") {
  std::mt19937 rng(2);
  std::uniform_int_distribution<int> dim(1, 40), zp(-128, 127), sh(0, 12);
  for (int iter = 0; iter < 200; ++iter) {
    const int T = dim(rng), S = dim(rng), d = dim(rng), qs = d + iter % 3, ks = d + iter % 5;
    const auto q8 = random_vec<int8_t>(size_t(T) * qs, rng), k8 = random_vec<int8_t>(size_t(S) * ks, rng);
    const auto q16 = random_vec<int16_t>(size_t(T) * qs, rng), k16 = random_vec<int16_t>(size_t(S) * ks, rng);
    const int zq = zp(rng), zk = zp(rng), shift8 = iter % 4 == 0 ? sh(rng) : 0, shift16 = sh(rng) + 6;
    std::vector<int32_t> s8(size_t(T) * (S + 1)), s16(size_t(T) * (S + 1));
    attn::detail::scores_s8_ref({q8.data(), T, d, qs}, zq, {k8.data(), S, d, ks}, zk, shift8,
                                {s8.data(), T, S, S + 1});
    attn::detail::scores_s16_ref({q16.data(), T, d, qs}, {k16.data(), S, d, ks}, shift16,
                                 {s16.data(), T, S, S + 1});
    for (int t = 0; t < T; ++t)
      for (int j = 0; j < S; ++j) {
        int64_t a8 = 0, a16 = 0;
        for (int c = 0; c < d; ++c) {
          a8 += int64_t(q8[size_t(t) * qs + c] - zq) * (k8[size_t(j) * ks + c] - zk);
          a16 += int64_t(q16[size_t(t) * qs + c]) * k16[size_t(j) * ks + c];
        }
        REQUIRE(s8[size_t(t) * (S + 1) + j] == round_shift(a8, shift8));
        REQUIRE(s16[size_t(t) * (S + 1) + j] == round_shift(a16, shift16));
      }
  }
}

TEST_CASE("weighted_sum_s8 / _s16 match int64 sums and requantization", "[attention_kernels_fixed]") {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> dim(1, 40), zp(-128, 127), prob(0, 32767);
  std::uniform_real_distribution<double> lg(-18.0, -12.0);
  for (int iter = 0; iter < 200; ++iter) {
    const int T = dim(rng), S = dim(rng), d = dim(rng), ps = 2 * S, vs = d + iter % 4;
    std::vector<int16_t> p(size_t(T) * ps);
    for (auto& x : p) x = static_cast<int16_t>(prob(rng) / S);  // rows sum to about 2^15 at most
    const auto v8 = random_vec<int8_t>(size_t(S) * vs, rng);
    const auto v16 = random_vec<int16_t>(size_t(S) * vs, rng);
    int32_t m = 0, sh = 0, m16 = 0, sh16 = 0;
    REQUIRE(attn::quantize_multiplier(std::pow(2.0, lg(rng) + 8), &m, &sh) == attn::Status::kOk);
    REQUIRE(attn::quantize_multiplier(std::pow(2.0, lg(rng)), &m16, &sh16) == attn::Status::kOk);
    const int zv = zp(rng), zo = zp(rng);
    std::vector<int8_t> o8(size_t(T) * d);
    std::vector<int16_t> o16(size_t(T) * d);
    attn::detail::weighted_sum_s8_ref({p.data(), T, S, ps}, {v8.data(), S, d, vs}, zv,
                                      attn::detail::Requant{m, sh, zo}, attn::matrix(o8.data(), T, d));
    attn::detail::weighted_sum_s16_ref({p.data(), T, S, ps}, {v16.data(), S, d, vs},
                                       attn::detail::Requant{m16, sh16, 0}, attn::matrix(o16.data(), T, d));
    const int64_t rm = m16 < 0x7FFF0000 ? (int64_t{m16} + 32768) >> 16 : 0x7FFF;
    for (int t = 0; t < T; ++t)
      for (int c = 0; c < d; ++c) {
        int64_t a8 = 0, a16 = 0;
        for (int j = 0; j < S; ++j) {
          a8 += int64_t(p[size_t(t) * ps + j]) * (v8[size_t(j) * vs + c] - zv);
          a16 += int64_t(p[size_t(t) * ps + j]) * v16[size_t(j) * vs + c];
        }
        REQUIRE(o8[size_t(t) * d + c] == std::clamp<int64_t>(zo + mbqm(a8, m, sh), -128, 127));
        const int64_t r = (a16 * rm) >> (14 - sh16);
        REQUIRE(o16[size_t(t) * d + c] == std::clamp<int64_t>((r + 1) >> 1, -32768, 32767));
      }
  }
}

}  // namespace
