// The fused attention softmax (int32 scores -> Q0.15 probabilities): its
// table, its accuracy against double, masking, and agreement with its
// specification re-written here in plain int64 math (exps exact, the final
// quotient within one unit: the kernel divides with gemmlowp's reciprocal).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "attn/quantize.h"
#include "kernels/exp2_table.h"
#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"

namespace {

using attn::detail::FusedSoftmax;

// Softmax constants for a real score step `unit` per integer score step
// (score_shift 0), computed here from the definition: t(u) = u * unit *
// log2(e) * 2^16 = ((u << shift) * m) >> 32 with m in [2^31, 2^32).
FusedSoftmax params_for(double unit) {
  const double real = unit * 1.4426950408889634 * 65536.0;
  REQUIRE(real >= 0.5);
  int ex = 0;
  const double f = std::frexp(real, &ex);
  FusedSoftmax sm{};
  sm.exp_multiplier = static_cast<uint32_t>(std::llround(std::ldexp(f, 32)));  // f < 1 - 2^-33 here
  sm.exp_shift = ex;
  auto t_of = [&](int64_t u) { return ((uint64_t(u) << sm.exp_shift) * sm.exp_multiplier) >> 32; };
  const uint64_t lim = uint64_t{16} << 16;
  int64_t lo = 0, hi = 1;  // t_of(lo) < lim; grow hi until t_of(hi) >= lim, then bisect
  while (t_of(hi) < lim) lo = hi, hi *= 2;
  while (hi - lo > 1) (t_of((lo + hi) / 2) < lim ? lo : hi) = (lo + hi) / 2;
  sm.diff_limit = static_cast<int32_t>(lo);
  return sm;
}

// The specification of softmax_fused_s32_ref.cpp, step by step in int64 and
// double: exps exactly as specified, the quotient correctly rounded.
std::vector<int32_t> spec(const std::vector<int32_t>& s, int begin, int end, const FusedSoftmax& sm) {
  std::vector<int32_t> p(s.size(), 0);
  if (begin >= end) return p;
  int64_t mx = s[begin];
  for (int j = begin; j < end; ++j) mx = std::max<int64_t>(mx, s[j]);
  std::vector<int64_t> e(s.size(), 0);
  int64_t sum = 0;
  // The phase: u times the step, round(multiplier * 2^(shift - 20)); keys with u * step >= 2^32 count
  // as past the limit. Q4.28: octave t / 2^28, table index (t mod 2^28) / 2^20.
  const uint64_t step =
      std::min<uint64_t>(((uint64_t{sm.exp_multiplier} << sm.exp_shift) + (1u << 19)) >> 20, 0xFFFFFFFFu);
  for (int j = begin; j < end; ++j) {
    const int64_t u = mx - s[j];
    const uint64_t t = uint64_t(u) * step;
    if (u > sm.diff_limit || t >= (uint64_t{1} << 32)) continue;
    const int64_t octave = int64_t(t >> 28), idx = int64_t((t >> 20) & 255);
    e[j] = (2 * int64_t{attn::detail::kExp2Table[idx]} / (int64_t{1} << octave) + 1) / 2;
    sum += e[j];
  }
  for (int j = begin; j < end; ++j)
    p[j] = static_cast<int32_t>(std::min<int64_t>(32767, std::llround(e[j] * 32768.0 / sum)));
  return p;
}

std::vector<int32_t> run(std::vector<int32_t> s, int begin, int end, const FusedSoftmax& sm) {
  attn::detail::softmax_fused_row_ref(s.data(), begin, end, static_cast<int32_t>(s.size()), sm);
  std::vector<int32_t> p(s.size());
  for (size_t j = 0; j < s.size(); ++j) {
    int16_t v;
    std::memcpy(&v, reinterpret_cast<const unsigned char*>(s.data()) + 2 * j, 2);
    p[j] = v;
  }
  return p;
}

// fused_softmax_reciprocal as first written, on gemmlowp's
// one_over_one_plus_x_for_x_in_0_1 with its saturating steps: the oracle of
// the kernel's shorter form (checked equal on all 2^31 mantissas when it was
// written; here on the edges and a spread of sums).
uint32_t reciprocal_gemmlowp(uint32_t sum) {
  namespace fp = attn::fp;
  const int h = fp::count_leading_zeros(sum);
  const auto a = static_cast<int32_t>((sum << h) - (uint32_t{1} << 31));
  const auto r31 = static_cast<uint32_t>(fp::one_over_one_plus_x_for_x_in_0_1(a));
  const int rs = h + attn::detail::kProbBits - 30;
  const uint32_t r = rs >= 0 ? r31 << rs : r31 >> -rs;
  return r - (r >> attn::detail::kProbBits);
}

TEST_CASE("fused softmax reciprocal equals gemmlowp's one_over_one_plus_x form", "[fused_softmax]") {
  std::vector<uint32_t> sums;
  for (uint32_t s = 65447; s < 65447 + 70000; ++s) sums.push_back(s);  // every sum near e_max
  for (int b = 17; b < 32; ++b) {  // powers of two (mantissa 0: the saturating step) and neighbours
    for (uint32_t d = 0; d < 8; ++d) {
      sums.push_back((uint32_t{1} << b) + d);
      sums.push_back((uint32_t{1} << b) - 1 - d);
    }
  }
  for (uint32_t d = 0; d < 8; ++d) sums.push_back(0xFFFFFFFFu - d);
  std::mt19937 rng(7);
  for (int i = 0; i < 500000; ++i)
    sums.push_back(65447 + static_cast<uint32_t>(rng() % (0xFFFFFFFFu - 65447)));
  size_t bad = 0;
  for (const uint32_t s : sums) bad += attn::detail::fused_softmax_reciprocal(s) != reciprocal_gemmlowp(s);
  REQUIRE(bad == 0);
}

TEST_CASE("fused softmax table is round(2^16 * 2^(-(k + 1/2) / 256))", "[fused_softmax]") {
  for (int k = 0; k < 256; ++k) {
    REQUIRE(attn::detail::kExp2Table[k] == std::lround(std::ldexp(std::exp2(-(k + 0.5) / 256.0), 16)));
  }
}

TEST_CASE("fused softmax: probabilities match double to Q0.15 precision, masked keys are 0",
          "[fused_softmax]") {
  std::mt19937 rng(21);
  std::uniform_int_distribution<int> len(1, 200);
  std::uniform_real_distribution<double> lg(-14.0, -2.0);
  double sq = 0.0;
  int64_t count = 0;
  for (int iter = 0; iter < 300; ++iter) {
    const double unit = std::pow(2.0, lg(rng));  // real score per integer step
    const FusedSoftmax sm = params_for(unit);
    const int n = len(rng);
    std::normal_distribution<double> sd(0.0, (iter % 3 + 1) * 2.0 / unit);  // scores of std 2, 4, 6
    std::vector<int32_t> s(n);
    for (auto& v : s) v = static_cast<int32_t>(std::max(-1e9, std::min(1e9, sd(rng))));
    std::uniform_int_distribution<int> pick(0, n);
    int begin = pick(rng), end = pick(rng);
    if (begin > end) std::swap(begin, end);
    if (iter % 4 == 0) begin = 0, end = n;
    const std::vector<int32_t> p = run(s, begin, end, sm);
    double mx = -1e300, sum = 0.0;
    for (int j = begin; j < end; ++j) mx = std::max(mx, s[j] * unit);
    for (int j = begin; j < end; ++j) sum += std::exp(s[j] * unit - mx);
    int64_t psum = 0;
    for (int j = 0; j < n; ++j) {
      if (j < begin || j >= end) {
        REQUIRE(p[j] == 0);
        continue;
      }
      const double want = std::exp(s[j] * unit - mx) / sum;
      // Error budget in units of 2^-15: the key's own rounding (1/2) and exp
      // rounding (1/2 relative to a sum >= 1); the table's relative error
      // (2^(1/512) - 1) on the key's exp and on the sum; every other key's exp
      // rounded, or cut below 2^-16, by at most 1/2 unit, moving p by want * n / 2.
      const double table = std::exp2(1.0 / 512) - 1.0;
      const double err = std::fabs(p[j] - want * 32768.0);
      REQUIRE(err <= 1.0 + 2.0 * table * want * 32768.0 + 0.5 * (end - begin) * want + 1e-9);
      if (want >= 0.05) {  // relative error of the large probabilities
        sq += (err / (want * 32768.0)) * (err / (want * 32768.0));
        ++count;
      }
      psum += p[j];
    }
    if (begin < end) REQUIRE(std::llabs(psum - 32768) <= 1 + (end - begin) / 2);
    // The kernel's rounding agrees with the correctly rounded quotient of its own exps (+-1).
    const std::vector<int32_t> want = spec(s, begin, end, sm);
    for (int j = 0; j < n; ++j) REQUIRE(std::abs(p[j] - want[j]) <= 1);
  }
  // On average the large probabilities carry the table's error: 2^(u/512) - 1 for u uniform in
  // [-1, 1] has an rms of 0.078%, plus a little from the sum and the final rounding.
  std::printf("fused softmax: rms relative error %.4f%% over %lld probabilities >= 0.05\n",
              100.0 * std::sqrt(sq / double(count)), static_cast<long long>(count));
  CHECK(std::sqrt(sq / double(count)) <= 0.0010);
}

TEST_CASE("fused softmax: equal scores, one key, fully masked rows", "[fused_softmax]") {
  const FusedSoftmax sm = params_for(0.01);
  // 4 equal scores: e = 65447 each, p = 2^15 / 4 = 8192.
  std::vector<int32_t> p = run({5, 5, 5, 5}, 0, 4, sm);
  for (int32_t v : p) CHECK(v == 8192);
  // One visible key gets 32767 (1.0 saturated to Q0.15), the rest 0.
  p = run({-100, 7, 1000}, 1, 2, sm);
  CHECK(p == std::vector<int32_t>{0, 32767, 0});
  // No visible key: all 0, not NaN-like garbage.
  p = run({1, 2, 3}, 2, 2, sm);
  CHECK(p == std::vector<int32_t>{0, 0, 0});
  // A key far below the max (u > diff_limit) gets exactly 0.
  p = run({0, -sm.diff_limit - 1}, 0, 2, sm);
  CHECK(p == std::vector<int32_t>{32767, 0});
}

}  // namespace
