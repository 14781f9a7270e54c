// The fused attention softmax (int32 scores -> Q0.15 probabilities): its
// table, its accuracy against double, masking, and agreement with its
// specification re-written here in plain int64 math (exps exact, the final
// quotient within one unit: the kernel divides with gemmlowp's reciprocal).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "attn/quantize.h"
#include "internal/exp2_table.h"
#include "internal/kernels_fixed.h"

namespace {

using attn::detail::FusedSoftmax;

// Softmax constants for a real score step `unit` per integer score step,
// through the converter's own path (quantize_attention uses the same rule).
FusedSoftmax params_for(double unit) {
  FusedSoftmax sm{};
  int32_t m = 0, s = 0;
  REQUIRE(attn::quantize_multiplier(unit * 1.4426950408889634 * 65536.0, &m, &s) == attn::Status::kOk);
  sm.exp_multiplier = m;
  sm.exp_shift = s;
  // The largest u with t(u) < 16 * 2^16, by brute force in int64.
  auto t_of = [&](int64_t u) {
    const int64_t x = u << (s > 0 ? s : 0);
    const int64_t hi = (x * m + (int64_t{1} << 30)) >> 31;  // SRDHM for x >= 0
    const int r = s > 0 ? 0 : -s;
    return r == 0 ? hi : (hi + (int64_t{1} << (r - 1))) >> r;
  };
  const int64_t lim = int64_t{16} << 16;
  int64_t lo = 0, hi = 1;  // t_of(lo) < lim; grow hi until t_of(hi) >= lim, then bisect
  while (t_of(hi) < lim) lo = hi, hi *= 2;
  while (hi - lo > 1) (t_of((lo + hi) / 2) < lim ? lo : hi) = (lo + hi) / 2;
  const int64_t u = lo;
  sm.diff_limit = static_cast<int32_t>(u);
  return sm;
}

// The specification of softmax_fused_s32_ref.cpp, step by step in int64.
std::vector<int32_t> spec(const std::vector<int32_t>& s, int begin, int end, const FusedSoftmax& sm) {
  std::vector<int32_t> p(s.size(), 0);
  if (begin >= end) return p;
  int64_t mx = s[begin];
  for (int j = begin; j < end; ++j) mx = std::max<int64_t>(mx, s[j]);
  std::vector<int64_t> e(s.size(), 0);
  int64_t sum = 0;
  for (int j = begin; j < end; ++j) {
    const int64_t u = mx - s[j];
    if (u > sm.diff_limit) continue;
    const int64_t x = u << std::max(sm.exp_shift, 0);
    const int64_t hi = (x * sm.exp_multiplier + (int64_t{1} << 30)) >> 31;
    const int r = std::max(-sm.exp_shift, 0);
    const int64_t t = r == 0 ? hi : (hi + (int64_t{1} << (r - 1))) >> r;
    const int64_t n = t >> 16, idx = (t >> 10) & 63, w = t & 1023;
    const int64_t a = attn::detail::kExp2Table[idx], b = attn::detail::kExp2Table[idx + 1];
    const int64_t interp = a - (((a - b) * w + 512) >> 10);
    e[j] = (interp + (int64_t{1} << (6 + n))) >> (7 + n);
    sum += e[j];
  }
  // p = round(e * 2^15 / sum) with the Q0.31 reciprocal of gemmlowp: reproduce
  // 1/(1+a) through the library's primitive is what the kernel does; here we
  // check the result is the correctly rounded quotient up to one unit.
  for (int j = begin; j < end; ++j)
    p[j] = static_cast<int32_t>(std::min<int64_t>(32767, (e[j] * 32768 * 2 + sum) / (2 * sum)));
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

TEST_CASE("fused softmax table is round(2^22 * 2^(-k/64))", "[fused_softmax]") {
  for (int k = 0; k <= 64; ++k) {
    REQUIRE(attn::detail::kExp2Table[k] == std::lround(std::ldexp(std::exp2(-k / 64.0), 22)));
  }
}

TEST_CASE("fused softmax: probabilities match double to Q0.15 precision, masked keys are 0",
          "[fused_softmax]") {
  std::mt19937 rng(21);
  std::uniform_int_distribution<int> len(1, 200);
  std::uniform_real_distribution<double> lg(-12.0, -2.0);
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
      // (1/2 relative to a sum >= 1), plus the sum's: every other key's exp is
      // rounded, or cut below 2^-16, by at most 1/2 unit, moving p by want * n / 2.
      const double err = std::fabs(p[j] - want * 32768.0);
      REQUIRE(err <= 1.0 + 0.5 * (end - begin) * want + 1e-9);
      sq += err * err;
      ++count;
      psum += p[j];
    }
    if (begin < end) REQUIRE(std::llabs(psum - 32768) <= 1 + (end - begin) / 2);
    // The kernel's rounding agrees with the correctly rounded quotient of its own exps (+-1).
    const std::vector<int32_t> want = spec(s, begin, end, sm);
    for (int j = 0; j < n; ++j) REQUIRE(std::abs(p[j] - want[j]) <= 1);
  }
  // On average the probabilities are as good as Q0.15 rounding allows.
  std::printf("fused softmax rms error %.3f units of 2^-15 over %lld probabilities\n",
              std::sqrt(sq / double(count)), static_cast<long long>(count));
  CHECK(std::sqrt(sq / double(count)) <= 0.35);  // 1/sqrt(12) = 0.289 is pure rounding
}

TEST_CASE("fused softmax: equal scores, one key, fully masked rows", "[fused_softmax]") {
  const FusedSoftmax sm = params_for(0.01);
  // 4 equal scores: e = 2^15 each, sum 2^17, p = 2^15 / 4 = 8192 exactly.
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
