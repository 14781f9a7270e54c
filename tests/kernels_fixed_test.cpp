// linear_s8, linear_s16, softmax_s8: bit-exact against hand-computed TFLite /
// CMSIS-NN arithmetic written out step by step, and against straightforward
// re-implementations written here (gemmlowp's fixed-point types modelled as a
// small class, int64 floor shifts instead of nudges) on random data.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "attn/kernels_fixed.h"
#include "attn/quantize.h"

namespace {

using attn::Status;

// ---- independent oracle arithmetic -----------------------------------------
int32_t srdhm(int32_t a, int32_t b) {  // round half up of a*b / 2^31
  if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
  return static_cast<int32_t>((int64_t{a} * b + (int64_t{1} << 30)) >> 31);
}
int32_t rdiv(int32_t x, int e) {  // round half away from zero of x / 2^e
  if (e == 0) return x;
  const int64_t half = int64_t{1} << (e - 1);
  return x >= 0 ? static_cast<int32_t>((int64_t{x} + half) >> e)
                : static_cast<int32_t>(-((-int64_t{x} + half) >> e));
}
int32_t mbqm(int32_t x, int32_t m, int s) {
  const int64_t shifted = int64_t{x} * (int64_t{1} << std::max(s, 0));
  return rdiv(srdhm(static_cast<int32_t>(static_cast<uint32_t>(shifted)), m), std::max(-s, 0));
}

// gemmlowp FixedPoint<int32, IntBits>, just enough for softmax.
template <int IntBits>
struct Fx {
  int32_t raw;
  static constexpr int kFrac = 31 - IntBits;
};
template <int A, int B>
Fx<A + B> operator*(Fx<A> a, Fx<B> b) {
  return {srdhm(a.raw, b.raw)};
}
template <int A>
Fx<A> operator+(Fx<A> a, Fx<A> b) {
  return {static_cast<int32_t>(uint32_t(a.raw) + uint32_t(b.raw))};
}
template <int A>
Fx<A> operator-(Fx<A> a, Fx<A> b) {
  return {static_cast<int32_t>(uint32_t(a.raw) - uint32_t(b.raw))};
}
// Rescale to another number of integer bits: a saturating left shift or a rounding right shift.
template <int To, int From>
Fx<To> rescale(Fx<From> a) {
  const int up = From - To;
  if (up <= 0) return {rdiv(a.raw, -up)};
  const int64_t v = int64_t{a.raw} * (int64_t{1} << (up > 0 ? up : 0));
  return {static_cast<int32_t>(std::min<int64_t>(std::max<int64_t>(v, INT32_MIN), INT32_MAX))};
}
template <int A>
Fx<A> from_double(double d) {
  return {static_cast<int32_t>(std::lround(d * std::ldexp(1.0, Fx<A>::kFrac)))};
}

Fx<0> exp_quarter(Fx<0> a) {  // exp on [-1/4, 0)
  const Fx<0> c{1895147668}, third{715827883};
  const Fx<0> x = a + Fx<0>{1 << 28};
  const Fx<0> x2 = rescale<0>(x * x), x3 = rescale<0>(rescale<0>(x * x) * x), x4 = rescale<0>(x2 * x2);
  const Fx<0> x4q{rdiv(x4.raw, 2)};
  const Fx<0> poly{rdiv((rescale<0>((x4q + x3) * third) + x2).raw, 1)};
  return c + rescale<0>(c * (x + poly));
}
Fx<0> exp_neg(Fx<5> a) {
  const int32_t quarter = 1 << (Fx<5>::kFrac - 2);
  const Fx<5> amq{static_cast<int32_t>(uint32_t(a.raw & (quarter - 1)) - uint32_t(quarter))};
  Fx<0> r = exp_quarter(rescale<0>(amq));
  const int32_t rem = static_cast<int32_t>(uint32_t(amq.raw) - uint32_t(a.raw));
  const int32_t mults[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
  for (int k = 0; k < 7; ++k) {
    if (rem & (1 << (Fx<5>::kFrac - 2 + k))) r = Fx<0>{srdhm(r.raw, mults[k])};
  }
  return a.raw == 0 ? Fx<0>{INT32_MAX} : r;
}
Fx<0> recip_one_plus(Fx<0> a) {
  const int64_t s = int64_t{a.raw} + INT32_MAX;
  const Fx<0> half_den{static_cast<int32_t>((s + (s >= 0 ? 1 : -1)) / 2)};
  Fx<2> x = Fx<2>{1515870810} + rescale<2>(half_den * Fx<2>{-1010580540});
  for (int i = 0; i < 3; ++i) {
    const Fx<2> one_minus = Fx<2>{1 << 29} - rescale<2>(half_den * x);
    x = x + rescale<2>(x * one_minus);
  }
  return rescale<0>(Fx<1>{x.raw});
}

// TFLite reference softmax for one int8 row, from the oracle pieces.
std::vector<int8_t> softmax_oracle(const std::vector<int8_t>& in, const attn::SoftmaxS8Params& p) {
  const int32_t mx = *std::max_element(in.begin(), in.end());
  Fx<12> sum{0};
  for (int8_t v : in) {
    const int32_t d = v - mx;
    if (d >= p.diff_min)
      sum = sum + rescale<12>(exp_neg(Fx<5>{srdhm(d * (1 << p.input_left_shift), p.input_multiplier)}));
  }
  int lz = 0;
  while (lz < 32 && !(uint32_t(sum.raw) & (0x80000000u >> lz))) ++lz;
  const Fx<0> scale = recip_one_plus(Fx<0>{static_cast<int32_t>((uint32_t(sum.raw) << lz) - 0x80000000u)});
  std::vector<int8_t> out;
  for (int8_t v : in) {
    const int32_t d = v - mx;
    int32_t o = -128;
    if (d >= p.diff_min) {
      const Fx<0> e = exp_neg(Fx<5>{srdhm(d * (1 << p.input_left_shift), p.input_multiplier)});
      o = std::min(127, std::max(-128, rdiv(srdhm(scale.raw, e.raw), 12 - lz + 31 - 8) - 128));
    }
    out.push_back(static_cast<int8_t>(o));
  }
  return out;
}

// ---- linear_s8 ---------------------------------------------------------------
TEST_CASE("linear_s8: hand-computed TFLite FULLY_CONNECTED per-channel case", "[kernels_fixed]") {
  const int8_t x[3] = {-128, 5, 127};                 // [1, 3], zp -3
  const int8_t w[2 * 3] = {1, -2, 127, -128, 0, -1};  // [2, 3]
  const int32_t bias[2] = {100, -7};
  const int32_t mult[2] = {1518500250, 1140850688};
  const int32_t shift[2] = {-6, -7};
  attn::LinearS8Params p;
  p.input_zero_point = -3;
  p.output_zero_point = 10;
  p.multiplier = mult;
  p.shift = shift;
  int8_t y[2] = {0, 0};
  REQUIRE(attn::linear_s8(attn::matrix(x, 1, 3), attn::matrix(w, 2, 3), bias, p, attn::matrix(y, 1, 2)) ==
          Status::kOk);
  // Channel 0: acc = (-128+3)*1 + (5+3)*(-2) + (127+3)*127 + 100 = -125 - 16 + 16510 + 100 = 16469.
  //   SRDHM(16469, 1518500250) = (25008180617250 + 2^30) / 2^31 -> 11645 (11645.47)
  //   RDivByPOT(11645, 6) = 181.95 -> 182;  + zp 10 = 192 -> clamp 127.
  CHECK(y[0] == 127);
  // Channel 1: acc = (-125)*(-128) + 8*0 + 130*(-1) - 7 = 16000 - 130 - 7 = 15863.
  //   SRDHM(15863, 1140850688) = 18097314463744 / 2^31 = 8426.9 -> 8427; / 2^7 = 65.8 -> 66; + 10 = 76.
  CHECK(y[1] == 76);

  // Same weights, output zero point -100 and a ReLU-style clamp [-100, 127]:
  // channel 0 gives 182 - 100 = 82; flip the input sign pattern for channel 1.
  p.output_zero_point = -100;
  p.act_min = -100;
  REQUIRE(attn::linear_s8(attn::matrix(x, 1, 3), attn::matrix(w, 2, 3), bias, p, attn::matrix(y, 1, 2)) ==
          Status::kOk);
  CHECK(y[0] == 82);
  CHECK(y[1] == -34);  // 66 - 100
  // Negative accumulator: acc1 = (-125)*(-128) + 0 - 130 - 31733 = -15863.
  const int32_t bias_neg[2] = {100, -31733};
  p.output_zero_point = 0;
  p.act_min = -128;
  REQUIRE(attn::linear_s8(attn::matrix(x, 1, 3), attn::matrix(w, 2, 3), bias_neg, p, attn::matrix(y, 1, 2)) ==
          Status::kOk);
  // SRDHM(-15863, 1140850688) = -8426.9 -> -8427; RDivByPOT(-8427, 7) = -65.8 -> -66.
  CHECK(y[1] == -66);
}

TEST_CASE("linear_s8: a folded zero-point bias gives identical outputs", "[kernels_fixed]") {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> i8(-128, 127);
  const int M = 5, N = 7, K = 33;
  std::vector<int8_t> x(M * K), w(N * K), y1(M * N), y2(M * N);
  for (auto& v : x) v = int8_t(i8(rng));
  for (auto& v : w) v = int8_t(i8(rng));
  std::vector<int32_t> bias(N), folded(N), mult(N), shift(N);
  for (int n = 0; n < N; ++n) {
    bias[n] = i8(rng) * 100;
    int32_t wsum = 0;
    for (int k = 0; k < K; ++k) wsum += w[n * K + k];
    folded[n] = bias[n] - 17 * wsum;
    REQUIRE(attn::quantize_multiplier(0.0007 * (n + 1), &mult[n], &shift[n]) == Status::kOk);
  }
  attn::LinearS8Params p;
  p.input_zero_point = 17;
  p.output_zero_point = -5;
  p.multiplier = mult.data();
  p.shift = shift.data();
  REQUIRE(attn::linear_s8(attn::matrix(x.data(), M, K), attn::matrix(w.data(), N, K), bias.data(), p,
                          attn::matrix(y1.data(), M, N)) == Status::kOk);
  p.input_zero_point = 0;
  REQUIRE(attn::linear_s8(attn::matrix(x.data(), M, K), attn::matrix(w.data(), N, K), folded.data(), p,
                          attn::matrix(y2.data(), M, N)) == Status::kOk);
  CHECK(y1 == y2);
}

TEST_CASE("linear_s8 and linear_s16 match straightforward re-implementations", "[kernels_fixed]") {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> i8(-128, 127), i16(-32768, 32767), dim(1, 40);
  std::uniform_real_distribution<double> lg(-14.0, -4.0);
  for (int iter = 0; iter < 200; ++iter) {
    const int M = dim(rng), N = dim(rng), K = dim(rng), stride = K + iter % 3;
    std::vector<int8_t> x(size_t(M) * stride), w(size_t(N) * K), y(size_t(M) * N);
    std::vector<int16_t> x16(size_t(M) * stride), y16(size_t(M) * N);
    for (auto& v : x) v = int8_t(i8(rng));
    for (auto& v : x16) v = int16_t(i16(rng));
    for (auto& v : w) v = int8_t(i8(rng));
    std::vector<int32_t> bias(N), mult(N), shift(N), mult16(N), shift16(N);
    std::vector<int64_t> bias64(N);
    for (int n = 0; n < N; ++n) {
      bias[n] = i16(rng) * 8;
      bias64[n] = int64_t{i16(rng)} * 1000;
      REQUIRE(attn::quantize_multiplier(std::pow(2.0, lg(rng)), &mult[n], &shift[n]) == Status::kOk);
      REQUIRE(attn::quantize_multiplier(std::pow(2.0, lg(rng) - 6), &mult16[n], &shift16[n]) == Status::kOk);
    }
    attn::LinearS8Params p;
    p.input_zero_point = i8(rng);
    p.output_zero_point = i8(rng);
    p.act_min = -128 + iter % 7;
    p.act_max = 127 - iter % 5;
    p.multiplier = mult.data();
    p.shift = shift.data();
    const bool with_bias = iter % 4 != 0;
    REQUIRE(attn::linear_s8(attn::Matrix<const int8_t>{x.data(), M, K, stride}, attn::matrix(w.data(), N, K),
                            with_bias ? bias.data() : nullptr, p,
                            attn::matrix(y.data(), M, N)) == Status::kOk);
    attn::LinearS16Params p16;
    p16.multiplier = mult16.data();
    p16.shift = shift16.data();
    REQUIRE(attn::linear_s16(attn::Matrix<const int16_t>{x16.data(), M, K, stride},
                             attn::matrix(w.data(), N, K), with_bias ? bias64.data() : nullptr, p16,
                             attn::matrix(y16.data(), M, N)) == Status::kOk);
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        int64_t acc = with_bias ? bias[n] : 0, acc16 = with_bias ? bias64[n] : 0;
        for (int k = 0; k < K; ++k) {
          acc += (x[size_t(m) * stride + k] - p.input_zero_point) * w[size_t(n) * K + k];
          acc16 += x16[size_t(m) * stride + k] * w[size_t(n) * K + k];
        }
        REQUIRE(acc == int64_t(int32_t(acc)));
        const int32_t want = std::min(
            p.act_max, std::max(p.act_min, p.output_zero_point + mbqm(int32_t(acc), mult[n], shift[n])));
        REQUIRE(y[size_t(m) * N + n] == want);
        // CMSIS-NN: Q15 multiplier, (acc * rm) >> (14 - shift) to int32, then (r + 1) >> 1.
        const int64_t rm = mult16[n] < 0x7FFF0000 ? (int64_t{mult16[n]} + 32768) / 65536 : 0x7FFF;
        const int64_t r = (acc16 * rm) >> (14 - shift16[n]);
        const int64_t want16 = std::min<int64_t>(32767, std::max<int64_t>(-32768, (r + 1) >> 1));
        REQUIRE(y16[size_t(m) * N + n] == want16);
      }
  }
}

TEST_CASE("linear_s16: hand-computed CMSIS-NN 16x8 case", "[kernels_fixed]") {
  const int16_t x[2] = {30000, -20000};  // [1, 2]
  const int8_t w[2] = {100, 50};         // [1, 2]
  const int64_t bias[1] = {123456};
  const int32_t mult[1] = {1518500250}, shift[1] = {-8};
  attn::LinearS16Params p;
  p.multiplier = mult;
  p.shift = shift;
  int16_t y[1] = {0};
  REQUIRE(attn::linear_s16(attn::matrix(x, 1, 2), attn::matrix(w, 1, 2), bias, p, attn::matrix(y, 1, 1)) ==
          Status::kOk);
  // acc = 30000*100 - 20000*50 + 123456 = 2123456; rm = (1518500250 + 2^15) >> 16 = 23170;
  // 2123456 * 23170 = 49200475520, >> (14 + 8) = 11730 (11730.3); (11730 + 1) >> 1 = 5865.
  CHECK(y[0] == 5865);
}

TEST_CASE("linear kernels reject bad views and parameters", "[kernels_fixed]") {
  const int8_t x[4] = {}, w[4] = {};
  int8_t y[4] = {};
  const int32_t mult[2] = {1 << 30, 1 << 30}, shift[2] = {0, 0}, bad_shift[2] = {0, 31};
  attn::LinearS8Params p;
  p.multiplier = mult;
  p.shift = shift;
  CHECK(attn::linear_s8(attn::matrix(x, 2, 2), attn::matrix(w, 2, 2), nullptr, p, attn::matrix(y, 2, 2)) ==
        Status::kOk);
  CHECK(attn::linear_s8(attn::matrix(x, 2, 2), attn::matrix(w, 2, 2), nullptr, p, attn::matrix(y, 2, 1)) ==
        Status::kBadShape);
  CHECK(attn::linear_s8(attn::matrix<const int8_t>(nullptr, 2, 2), attn::matrix(w, 2, 2), nullptr, p,
                        attn::matrix(y, 2, 2)) == Status::kNullArgument);
  p.shift = bad_shift;
  CHECK(attn::linear_s8(attn::matrix(x, 2, 2), attn::matrix(w, 2, 2), nullptr, p, attn::matrix(y, 2, 2)) ==
        Status::kBadQuantParams);
  p.shift = shift;
  p.input_zero_point = 128;
  CHECK(attn::linear_s8(attn::matrix(x, 2, 2), attn::matrix(w, 2, 2), nullptr, p, attn::matrix(y, 2, 2)) ==
        Status::kBadQuantParams);
  p.input_zero_point = 0;
  p.multiplier = nullptr;
  CHECK(attn::linear_s8(attn::matrix(x, 2, 2), attn::matrix(w, 2, 2), nullptr, p, attn::matrix(y, 2, 2)) ==
        Status::kNullArgument);
  const int16_t x16[4] = {};
  int16_t y16[4] = {};
  const int32_t shift15[2] = {15, 0};
  attn::LinearS16Params p16;
  p16.multiplier = mult;
  p16.shift = shift15;  // 16x8 allows at most 14
  CHECK(attn::linear_s16(attn::matrix(x16, 2, 2), attn::matrix(w, 2, 2), nullptr, p16,
                         attn::matrix(y16, 2, 2)) == Status::kBadQuantParams);
  CHECK(attn::linear_s8_scratch_bytes(2, 2, 2) == 0);
}

// ---- softmax_s8 --------------------------------------------------------------
TEST_CASE("softmax_s8: hand-computed anchors", "[kernels_fixed]") {
  attn::SoftmaxS8Params p;
  REQUIRE(attn::softmax_s8_params(1.0, 0.5, &p) == Status::kOk);
  // Equal inputs: exp(0) = INT32_MAX, each term RDivByPOT(INT32_MAX, 12) = 2^19, sum of 4 = 2^21;
  // headroom 10, (2^21 << 10) - 2^31 = 0, 1/(1+0) = 2^31 - 1 (Q0.31);
  // SRDHM(2^31-1, 2^31-1) = 2^31 - 2; / 2^(12 - 10 + 23) = 63.99.. -> 64; - 128 = -64 (= 0.25 * 256 - 128).
  const int8_t eq[4] = {7, 7, 7, 7};
  int8_t y[5] = {};
  REQUIRE(attn::softmax_s8(attn::matrix(eq, 1, 4), p, attn::matrix(y, 1, 4)) == Status::kOk);
  for (int j = 0; j < 4; ++j) CHECK(y[j] == -64);
  // One input: probability 1 = 256/256 saturates to 127.
  REQUIRE(attn::softmax_s8(attn::matrix(eq, 1, 1), p, attn::matrix(y, 1, 1)) == Status::kOk);
  CHECK(y[0] == 127);
  // Scale 0.5, inputs differing by 1 (0.5 real): float softmax * 256 =
  // 14.85, 24.49, 40.37, 66.56, 109.74; no value is near a rounding tie, so
  // the integer result is the rounded float one: 15, 24, 40, 67, 110 (- 128).
  const int8_t ramp[5] = {-127, -126, -125, -124, -123};
  REQUIRE(attn::softmax_s8(attn::matrix(ramp, 1, 5), p, attn::matrix(y, 1, 5)) == Status::kOk);
  const int8_t want[5] = {15 - 128, 24 - 128, 40 - 128, 67 - 128, 110 - 128};
  for (int j = 0; j < 5; ++j) CHECK(int(y[j]) == int(want[j]));
  // diff_min: with scale 1/16 the radius is floor(31 * 2^26 / 2^23) = 248, so
  // -128 next to 127 (diff -255 < -248) is skipped and gets exactly -128.
  REQUIRE(attn::softmax_s8_params(1.0, 1.0 / 16, &p) == Status::kOk);
  const int8_t far[2] = {127, -128};
  REQUIRE(attn::softmax_s8(attn::matrix(far, 1, 2), p, attn::matrix(y, 1, 2)) == Status::kOk);
  CHECK(y[0] == 127);
  CHECK(y[1] == -128);
}

TEST_CASE("softmax_s8 matches a gemmlowp-style re-implementation on random rows", "[kernels_fixed]") {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> i8(-128, 127), len(1, 300);
  std::uniform_real_distribution<double> lg(-9.0, 1.0);
  for (int iter = 0; iter < 300; ++iter) {
    attn::SoftmaxS8Params p;
    const double scale = std::pow(2.0, lg(rng));
    REQUIRE(attn::softmax_s8_params(iter % 5 == 0 ? 2.0 : 1.0, scale, &p) == Status::kOk);
    const int n = len(rng), rows = 3;
    const int spread = 1 + iter % 256;  // narrow and wide rows
    std::uniform_int_distribution<int> vals(-128, -128 + spread - 1);
    std::vector<int8_t> x(size_t(rows) * n), y(size_t(rows) * n);
    for (auto& v : x) v = int8_t(iter % 2 ? vals(rng) : i8(rng));
    REQUIRE(attn::softmax_s8(attn::matrix(x.data(), rows, n), p, attn::matrix(y.data(), rows, n)) ==
            Status::kOk);
    for (int r = 0; r < rows; ++r) {
      const std::vector<int8_t> row(x.begin() + r * n, x.begin() + (r + 1) * n);
      const std::vector<int8_t> want = softmax_oracle(row, p);
      for (int j = 0; j < n; ++j) REQUIRE(int(y[size_t(r) * n + j]) == int(want[j]));
    }
    // In place on the same view gives the same bytes.
    std::vector<int8_t> z = x;
    REQUIRE(attn::softmax_s8(attn::matrix(z.data(), rows, n), p, attn::matrix(z.data(), rows, n)) ==
            Status::kOk);
    REQUIRE(z == y);
  }
}

TEST_CASE("softmax_s8 rejects bad views and parameters", "[kernels_fixed]") {
  std::vector<int8_t> x(4096), y(4096);
  attn::SoftmaxS8Params p;
  REQUIRE(attn::softmax_s8_params(1.0, 0.1, &p) == Status::kOk);
  CHECK(attn::softmax_s8(attn::matrix(x.data(), 1, 4096), p, attn::matrix(y.data(), 1, 4096)) ==
        Status::kBadShape);
  CHECK(attn::softmax_s8(attn::matrix(x.data(), 1, 4), p, attn::matrix(y.data(), 1, 3)) == Status::kBadShape);
  attn::SoftmaxS8Params bad = p;
  bad.diff_min = 1;
  CHECK(attn::softmax_s8(attn::matrix(x.data(), 1, 4), bad, attn::matrix(y.data(), 1, 4)) ==
        Status::kBadQuantParams);
  bad = p;
  bad.input_multiplier = 0;
  CHECK(attn::softmax_s8(attn::matrix(x.data(), 1, 4), bad, attn::matrix(y.data(), 1, 4)) ==
        Status::kBadQuantParams);
}

}  // namespace
