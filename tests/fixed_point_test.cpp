// kernels/fixed_point.h and quantize_multiplier: hand-computed values with
// the arithmetic written out, edge cases (INT32_MIN, negative shifts, ties),
// and random comparisons against straightforward re-implementations written
// here in a different form (floor shifts on int64 instead of nudges).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>

#include "attn/quantize.h"
#include "kernels/fixed_point.h"

namespace {

namespace fp = attn::fp;

// SRDHM is round-half-up of a*b/2^31: floor((a*b + 2^30) / 2^31), the int64
// arithmetic shift being a floor.
int32_t srdhm_oracle(int32_t a, int32_t b) {
  if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
  return static_cast<int32_t>((int64_t{a} * b + (int64_t{1} << 30)) >> 31);
}
// Round half away from zero of x / 2^e.
int32_t rdivpot_oracle(int32_t x, int e) {
  if (e == 0) return x;
  const int64_t half = int64_t{1} << (e - 1);
  return x >= 0 ? static_cast<int32_t>((int64_t{x} + half) >> e)
                : static_cast<int32_t>(-((-int64_t{x} + half) >> e));
}

TEST_CASE("SRDHM: hand-computed values, ties and saturation", "[fixed_point]") {
  // 2^30 * 2^30 / 2^31 = 2^29 exactly.
  CHECK(fp::saturating_rounding_doubling_high_mul(1 << 30, 1 << 30) == (1 << 29));
  // 3 * 2^30 / 2^31 = 1.5: (3*2^30 + 2^30) / 2^31 = 2.
  CHECK(fp::saturating_rounding_doubling_high_mul(3, 1 << 30) == 2);
  // -1.5: (-3*2^30 + 1 - 2^30) / 2^31 = -1.99.. truncates to -1 (ties go up).
  CHECK(fp::saturating_rounding_doubling_high_mul(-3, 1 << 30) == -1);
  // -2.5 -> -2, -0.5 -> 0, 0.5 -> 1.
  CHECK(fp::saturating_rounding_doubling_high_mul(-5, 1 << 30) == -2);
  CHECK(fp::saturating_rounding_doubling_high_mul(-1, 1 << 30) == 0);
  CHECK(fp::saturating_rounding_doubling_high_mul(1, 1 << 30) == 1);
  // 16469 * 1518500250 = 25008180617250; / 2^31 = 11645.47 -> 11645.
  CHECK(fp::saturating_rounding_doubling_high_mul(16469, 1518500250) == 11645);
  // The one overflow saturates; INT32_MIN * INT32_MAX does not overflow.
  CHECK(fp::saturating_rounding_doubling_high_mul(INT32_MIN, INT32_MIN) == INT32_MAX);
  CHECK(fp::saturating_rounding_doubling_high_mul(INT32_MIN, INT32_MAX) == -INT32_MAX);
  CHECK(fp::saturating_rounding_doubling_high_mul(INT32_MAX, INT32_MAX) == INT32_MAX - 1);
}

TEST_CASE("RoundingDivideByPOT: ties away from zero, exponents 0 and 31", "[fixed_point]") {
  CHECK(fp::rounding_divide_by_pot(3, 1) == 2);    // 1.5 -> 2
  CHECK(fp::rounding_divide_by_pot(-3, 1) == -2);  // -1.5 -> -2
  CHECK(fp::rounding_divide_by_pot(5, 2) == 1);    // 1.25 -> 1
  CHECK(fp::rounding_divide_by_pot(-5, 2) == -1);  // -1.25 -> -1
  CHECK(fp::rounding_divide_by_pot(-6, 2) == -2);  // -1.5 -> -2
  CHECK(fp::rounding_divide_by_pot(6, 2) == 2);    // 1.5 -> 2
  CHECK(fp::rounding_divide_by_pot(-7, 0) == -7);
  CHECK(fp::rounding_divide_by_pot(INT32_MIN, 31) == -1);   // -1.0
  CHECK(fp::rounding_divide_by_pot(INT32_MAX, 31) == 1);    // 0.99.. -> 1
  CHECK(fp::rounding_divide_by_pot(1 << 29, 31) == 0);      // 0.25 -> 0
  CHECK(fp::rounding_divide_by_pot(1 << 30, 31) == 1);      // 0.5 -> 1
  CHECK(fp::rounding_divide_by_pot(-(1 << 30), 31) == -1);  // -0.5 -> -1
}

TEST_CASE("MultiplyByQuantizedMultiplier: shifts of both signs", "[fixed_point]") {
  // Right shift: SRDHM(16469, 1518500250) = 11645, 11645 / 2^6 = 181.95 -> 182.
  CHECK(fp::multiply_by_quantized_multiplier(16469, 1518500250, -6) == 182);
  // Negative accumulator: SRDHM(-15863, 1140850688) = -8427 (-8426.9), / 2^7 = -65.8 -> -66.
  CHECK(fp::multiply_by_quantized_multiplier(-15863, 1140850688, -7) == -66);
  // Left shift: 100 * 2^3 = 800; SRDHM(800, 2^30) = 400.
  CHECK(fp::multiply_by_quantized_multiplier(100, 1 << 30, 3) == 400);
  // Multiplier 0 (a flushed scale) gives 0.
  CHECK(fp::multiply_by_quantized_multiplier(123456, 0, -3) == 0);
  // INT32_MIN with the largest multiplier: SRDHM(-2^31, 2^31 - 1) = -(2^31 - 1).
  CHECK(fp::multiply_by_quantized_multiplier(INT32_MIN, INT32_MAX, 0) == -INT32_MAX);
  // Shift -31: -(2^31 - 1) / 2^31 = -0.99.. -> -1.
  CHECK(fp::multiply_by_quantized_multiplier(INT32_MIN, INT32_MAX, -31) == -1);
}

TEST_CASE("16x8 requantization: reduced multiplier and the final rounding", "[fixed_point]") {
  // (1518500250 + 2^15) >> 16 = 23170.
  CHECK(fp::reduce_multiplier_q15(1518500250) == 23170);
  CHECK(fp::reduce_multiplier_q15(0x7FFF0000) == 0x7FFF);
  CHECK(fp::reduce_multiplier_q15(0x7FFEFFFF) == 0x7FFF);  // (0x7FFEFFFF + 2^15) >> 16
  // acc = 1000000, rm = 23170, shift = -10: 1000000 * 23170 = 23170000000,
  // >> (14 + 10) = 1381 (1381.06), then (1381 + 1) >> 1 = 691.
  CHECK(fp::requantize_s64(1000000, 23170, -10) == 691);
  // Negative: -23170000000 >> 24 = -1382 (floor), (-1382 + 1) >> 1 = -691.
  CHECK(fp::requantize_s64(-1000000, 23170, -10) == -691);
  // Tie: acc * rm >> 24 = 3 exactly -> (3 + 1) >> 1 = 2 (half up); -3 -> -1.
  CHECK(fp::requantize_s64(int64_t{3} << 24, 1, -10) == 2);
  CHECK(fp::requantize_s64(-(int64_t{3} << 24), 1, -10) == -1);
  // Accumulators beyond 32 bits are fine as long as the result fits.
  CHECK(fp::requantize_s64(int64_t{1} << 40, 1 << 14, -30) == 1 << 9);
}

TEST_CASE("primitives match straightforward re-implementations on random inputs", "[fixed_point]") {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int32_t> any(INT32_MIN, INT32_MAX);
  std::uniform_int_distribution<int32_t> mult(1 << 30, INT32_MAX);
  std::uniform_int_distribution<int> exp(0, 31);
  std::uniform_int_distribution<int> shift(-31, 0);
  for (int i = 0; i < 200000; ++i) {
    const int32_t a = any(rng), b = any(rng);
    REQUIRE(fp::saturating_rounding_doubling_high_mul(a, b) == srdhm_oracle(a, b));
    const int e = exp(rng);
    REQUIRE(fp::rounding_divide_by_pot(a, e) == rdivpot_oracle(a, e));
    const int s = shift(rng);
    const int32_t m = mult(rng);
    REQUIRE(fp::multiply_by_quantized_multiplier(a, m, s) == rdivpot_oracle(srdhm_oracle(a, m), -s));
  }
}

TEST_CASE("exp_on_negative_values and 1/(1+x) are accurate", "[fixed_point]") {
  // exp(0) saturates to INT32_MAX; exp(-1) in Q0.31.
  CHECK(fp::exp_on_negative_values(0, 5) == INT32_MAX);
  for (int i = 0; i <= 2000; ++i) {
    const double a = -31.9 * i / 2000.0;
    const int32_t raw = static_cast<int32_t>(std::lround(a * (1 << 26)));  // Q5.26
    const double got = fp::exp_on_negative_values(raw, 5) / 2147483648.0;
    REQUIRE(got == Approx(std::exp(raw / double(1 << 26))).margin(3e-9));
  }
  for (int i = 0; i < 1000; ++i) {
    const int32_t raw = static_cast<int32_t>(int64_t{i} * (INT32_MAX / 1000));  // x in [0, 1)
    const double x = raw / 2147483648.0;
    REQUIRE(fp::one_over_one_plus_x_for_x_in_0_1(raw) / 2147483648.0 == Approx(1.0 / (1.0 + x)).margin(3e-9));
  }
}

TEST_CASE("quantize_multiplier: frexp, rounding, the 2^31 carry and flushing", "[fixed_point]") {
  int32_t m = 0, s = 0;
  REQUIRE(attn::quantize_multiplier(0.5, &m, &s) == attn::Status::kOk);
  CHECK((m == (1 << 30) && s == 0));  // 0.5 = 2^30 / 2^31 * 2^0
  REQUIRE(attn::quantize_multiplier(1.0, &m, &s) == attn::Status::kOk);
  CHECK((m == (1 << 30) && s == 1));
  REQUIRE(attn::quantize_multiplier(0.1, &m, &s) == attn::Status::kOk);
  // 0.1 = 0.8 * 2^-3; 0.8 * 2^31 = 1717986918.4 -> 1717986918.
  CHECK((m == 1717986918 && s == -3));
  // f = 1 - 2^-40 rounds to 2^31: carried into the shift.
  REQUIRE(attn::quantize_multiplier(1.0 - std::ldexp(1.0, -40), &m, &s) == attn::Status::kOk);
  CHECK((m == (1 << 30) && s == 1));
  // Below 2^-32 everything flushes to zero.
  REQUIRE(attn::quantize_multiplier(std::ldexp(1.0, -33), &m, &s) == attn::Status::kOk);
  CHECK((m == 0 && s == 0));
  REQUIRE(attn::quantize_multiplier(0.0, &m, &s) == attn::Status::kOk);
  CHECK((m == 0 && s == 0));
  CHECK(attn::quantize_multiplier(-0.5, &m, &s) == attn::Status::kBadQuantParams);
  CHECK(attn::quantize_multiplier(std::nan(""), &m, &s) == attn::Status::kBadQuantParams);
  CHECK(attn::quantize_multiplier(0.5, nullptr, &s) == attn::Status::kNullArgument);
  // Round trip: multiplier * 2^(shift - 31) is within half an ulp.
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> lg(-30.0, 10.0);
  for (int i = 0; i < 10000; ++i) {
    const double real = std::pow(2.0, lg(rng));
    REQUIRE(attn::quantize_multiplier(real, &m, &s) == attn::Status::kOk);
    REQUIRE(m >= (1 << 30));
    REQUIRE(std::fabs(std::ldexp(double(m), s - 31) - real) <= std::ldexp(0.5, s - 31));
  }
}

TEST_CASE("softmax_s8_params follow TFLite's PreprocessSoftmaxScaling", "[fixed_point]") {
  attn::SoftmaxS8Params p;
  // beta 1, scale 1/16: real = 2^-4 * 2^26 = 2^22 -> multiplier 2^30, left shift 23.
  REQUIRE(attn::softmax_s8_params(1.0, 1.0 / 16, &p) == attn::Status::kOk);
  CHECK(p.input_multiplier == (1 << 30));
  CHECK(p.input_left_shift == 23);
  // radius = floor(31 * 2^26 / 2^23) = 248.
  CHECK(p.diff_min == -248);
  CHECK(attn::softmax_s8_params(1.0, 0.0, &p) == attn::Status::kBadQuantParams);
}

}  // namespace
