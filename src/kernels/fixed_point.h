// kernels/fixed_point.h: the integer arithmetic of TFLite, TFLM and CMSIS-NN
// (gemmlowp fixed point), header-only, constexpr, no float anywhere.
//
// One implementation of each primitive, shared by the run-time kernels, the
// converter (which only adds QuantizeMultiplier, see quantize_multiplier.h)
// and the tests: a converter that rounds differently from the runtime is a
// classic source of off-by-one outputs. src/FIXED_POINT.md writes the
// arithmetic out.
//
// Conventions: a "Qm.n" int32 holds value raw / 2^n with m integer bits and
// n = 31 - m fractional bits. Signed right shifts are arithmetic (every
// compiler attn supports does this; C++20 makes it the rule).
#pragma once

#include <cstdint>

#include "attn/tensor.h"  // ATTN_ALWAYS_INLINE

namespace attn {
namespace fp {

constexpr int32_t kInt32Min = INT32_MIN;
constexpr int32_t kInt32Max = INT32_MAX;

// Wrapping int32 arithmetic (two's complement), without signed-overflow UB.
ATTN_ALWAYS_INLINE constexpr int32_t wrap_add(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
ATTN_ALWAYS_INLINE constexpr int32_t wrap_sub(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
}
ATTN_ALWAYS_INLINE constexpr int32_t wrap_shl(int32_t a, int s) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) << s);
}

// round(a * b / 2^31), ties away from zero, saturating the one overflow
// (INT32_MIN * INT32_MIN). gemmlowp's SaturatingRoundingDoublingHighMul.
ATTN_ALWAYS_INLINE constexpr int32_t saturating_rounding_doubling_high_mul(int32_t a, int32_t b) {
  if (a == kInt32Min && b == kInt32Min) return kInt32Max;
  const int64_t ab = static_cast<int64_t>(a) * static_cast<int64_t>(b);
  const int64_t nudge = ab >= 0 ? (int64_t{1} << 30) : (1 - (int64_t{1} << 30));
  // Division truncates toward zero (not a shift): that is what makes the
  // nudge round half away from zero on both signs.
  return static_cast<int32_t>((ab + nudge) / (int64_t{1} << 31));
}

// round(x / 2^exponent), ties away from zero; exponent in [0, 31].
// gemmlowp's RoundingDivideByPOT.
ATTN_ALWAYS_INLINE constexpr int32_t rounding_divide_by_pot(int32_t x, int exponent) {
  const int32_t mask = static_cast<int32_t>((int64_t{1} << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

// x * multiplier * 2^shift with multiplier in Q0.31 ([2^30, 2^31) after
// QuantizeMultiplier, or 0) and shift in [-31, 30]: a left shift first
// (wrapping like TFLite's int32 product), then SRDHM, then a rounding right
// shift ("double rounding", TFLite's default build).
ATTN_ALWAYS_INLINE constexpr int32_t multiply_by_quantized_multiplier(int32_t x, int32_t multiplier,
                                                                      int shift) {
  const int left = shift > 0 ? shift : 0;
  const int right = shift > 0 ? 0 : -shift;
  return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(wrap_shl(x, left), multiplier), right);
}

// SRDHM(x * 2^left_shift, multiplier) for left_shift >= 0 (TFLite's
// MultiplyByQuantizedMultiplierGreaterThanOne, used by softmax).
ATTN_ALWAYS_INLINE constexpr int32_t multiply_by_quantized_multiplier_gt_one(int32_t x, int32_t multiplier,
                                                                             int left_shift) {
  return saturating_rounding_doubling_high_mul(wrap_shl(x, left_shift), multiplier);
}

// ---- 16x8 requantization (CMSIS-NN arm_nn_requantize_s64 / REDUCE_MULTIPLIER)
// The Q0.31 multiplier reduced to Q0.15, rounding; 0x7FFF near the top.
ATTN_ALWAYS_INLINE constexpr int32_t reduce_multiplier_q15(int32_t multiplier) {
  return multiplier < 0x7FFF0000 ? (multiplier + (1 << 15)) >> 16 : 0x7FFF;
}
// acc (int64) * reduced (Q0.15) * 2^shift, rounded half up; shift in [-31, 14].
// The 64-bit product is narrowed to int32 before the last rounding step, as
// CMSIS-NN does (callers clamp to int16 right after).
ATTN_ALWAYS_INLINE constexpr int32_t requantize_s64(int64_t acc, int32_t reduced_multiplier, int shift) {
  const int64_t prod = acc * reduced_multiplier;
  const int32_t r = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(prod >> (14 - shift))));
  return wrap_add(r, 1) >> 1;
}
// The same from the full Q0.31 multiplier (what the converter stores).
ATTN_ALWAYS_INLINE constexpr int32_t multiply_by_quantized_multiplier_s64(int64_t acc, int32_t multiplier,
                                                                          int shift) {
  return requantize_s64(acc, reduce_multiplier_q15(multiplier), shift);
}

// ---- the accumulator of each activation type ------------------------------
// int8 activations accumulate in int32 and requantize as TFLite int8 does;
// int16 activations (x int8 weights, or x Q0.15 probabilities) accumulate in
// int64 and requantize as CMSIS-NN 16x8 does. The ref kernels are written
// once over the activation type with these (and its range, as int32).
template <typename Act>
struct Accumulator;
template <>
struct Accumulator<int8_t> {
  using Acc = int32_t;
  static constexpr int32_t kMin = -128, kMax = 127;  // the activation type's range
  ATTN_ALWAYS_INLINE static constexpr int32_t requantize(int32_t acc, int32_t multiplier, int shift) {
    return multiply_by_quantized_multiplier(acc, multiplier, shift);
  }
};
template <>
struct Accumulator<int16_t> {
  using Acc = int64_t;
  static constexpr int32_t kMin = -32768, kMax = 32767;
  ATTN_ALWAYS_INLINE static constexpr int32_t requantize(int64_t acc, int32_t multiplier, int shift) {
    return multiply_by_quantized_multiplier_s64(acc, multiplier, shift);
  }
};

// ---- gemmlowp transcendental helpers (TFLite int8 softmax) ----------------

// x * 2^exponent (exponent > 0), saturating at the int32 limits.
ATTN_ALWAYS_INLINE constexpr int32_t saturating_shift_left(int32_t x, int exponent) {
  const int32_t threshold = static_cast<int32_t>((int64_t{1} << (31 - exponent)) - 1);
  return x > threshold ? kInt32Max : x < -threshold ? kInt32Min : wrap_shl(x, exponent);
}

// (a + b) / 2, rounded half away from zero (gemmlowp RoundingHalfSum).
ATTN_ALWAYS_INLINE constexpr int32_t rounding_half_sum(int32_t a, int32_t b) {
  const int64_t sum = static_cast<int64_t>(a) + b;
  return static_cast<int32_t>((sum + (sum >= 0 ? 1 : -1)) / 2);
}

// exp(a) for a in [-1/4, 0), a and the result in Q0.31. A 4th order Taylor
// expansion around -1/8, every product an SRDHM.
ATTN_ALWAYS_INLINE constexpr int32_t exp_on_interval_between_negative_one_quarter_and_0_excl(int32_t a) {
  constexpr int32_t kExpMinusOneEighth = 1895147668;  // exp(-1/8) in Q0.31
  constexpr int32_t kOneThird = 715827883;            // 1/3 in Q0.31
  const int32_t x = wrap_add(a, int32_t{1} << 28);    // a + 1/8
  const int32_t x2 = saturating_rounding_doubling_high_mul(x, x);
  const int32_t x3 = saturating_rounding_doubling_high_mul(x2, x);
  const int32_t x4 = saturating_rounding_doubling_high_mul(x2, x2);
  const int32_t x4_over_4 = rounding_divide_by_pot(x4, 2);
  // x^4/24 + x^3/6 + x^2/2 = ((x^4/4 + x^3) / 3 + x^2) / 2
  const int32_t poly = rounding_divide_by_pot(
      wrap_add(saturating_rounding_doubling_high_mul(wrap_add(x4_over_4, x3), kOneThird), x2), 1);
  return wrap_add(kExpMinusOneEighth,
                  saturating_rounding_doubling_high_mul(kExpMinusOneEighth, wrap_add(x, poly)));
}

// exp(a) for a <= 0, a in Q(integer_bits).(31 - integer_bits), result in Q0.31
// (exp(0) saturates to INT32_MAX). integer_bits in [1, 30]. gemmlowp's
// exp_on_negative_values: the interval part, then one multiplication by
// exp(-2^k) for every set bit k >= -2 of -a (a "barrel shifter").
ATTN_ALWAYS_INLINE constexpr int32_t exp_on_negative_values(int32_t a, int integer_bits) {
  const int frac_bits = 31 - integer_bits;
  const int32_t one_quarter = int32_t{1} << (frac_bits - 2);
  const int32_t a_mod_quarter_minus_one_quarter = wrap_sub(a & (one_quarter - 1), one_quarter);  // [-1/4, 0)
  int32_t result = exp_on_interval_between_negative_one_quarter_and_0_excl(
      saturating_shift_left(a_mod_quarter_minus_one_quarter, integer_bits));  // rescaled to Q0.31
  const int32_t remainder = wrap_sub(a_mod_quarter_minus_one_quarter, a);     // -a rounded up to 1/4, >= 0
  // exp(-2^k) in Q0.31 for k = -2 .. 4.
  constexpr int32_t kExpMinusPow2[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
  for (int k = -2; k <= 4; ++k) {
    if (integer_bits > k && (remainder & (int32_t{1} << (frac_bits + k))) != 0) {
      result = saturating_rounding_doubling_high_mul(result, kExpMinusPow2[k + 2]);
    }
  }
  if (integer_bits > 5) {  // below -32 the result is 0
    const int32_t clamp = -(int32_t{1} << (36 - integer_bits));
    if (a < clamp) result = 0;
  }
  return a == 0 ? kInt32Max : result;
}

// 1 / (1 + a) for a in [0, 1), a in Q0.31, result in Q0.31. gemmlowp's
// one_over_one_plus_x_for_x_in_0_1: three Newton-Raphson steps on the half
// denominator, from the 48/17 - 32/17 d start, in Q2.29.
ATTN_ALWAYS_INLINE constexpr int32_t one_over_one_plus_x_for_x_in_0_1(int32_t a) {
  const int32_t half_denominator = rounding_half_sum(a, kInt32Max);  // (1 + a) / 2, Q0.31
  constexpr int32_t k48Over17 = 1515870810;                          // Q2.29
  constexpr int32_t kNeg32Over17 = -1010580540;                      // Q2.29
  constexpr int32_t kOneQ2 = int32_t{1} << 29;                       // 1.0 in Q2.29
  int32_t x = wrap_add(k48Over17, saturating_rounding_doubling_high_mul(half_denominator, kNeg32Over17));
  for (int i = 0; i < 3; ++i) {
    const int32_t half_denominator_times_x =
        saturating_rounding_doubling_high_mul(half_denominator, x);        // Q2.29
    const int32_t one_minus = wrap_sub(kOneQ2, half_denominator_times_x);  // Q2.29
    // x * one_minus is Q4.27; back to Q2.29 with a saturating << 2.
    x = wrap_add(x, saturating_shift_left(saturating_rounding_doubling_high_mul(x, one_minus), 2));
  }
  // x ~ 1 / half_denominator in Q2.29 is 1 / (1 + a) in Q1.30: << 1 to Q0.31.
  return saturating_shift_left(x, 1);
}

// Leading zero bits of a 32-bit value (32 for 0), portable and constexpr.
ATTN_ALWAYS_INLINE constexpr int count_leading_zeros(uint32_t x) {
  if (x == 0) return 32;
#if defined(__GNUC__)
  return __builtin_clz(x);
#else
  int n = 0;
  while ((x & 0x80000000u) == 0) {
    x <<= 1;
    ++n;
  }
  return n;
#endif
}

// Clamp to [lo, hi].
ATTN_ALWAYS_INLINE constexpr int32_t clamp_i32(int32_t v, int32_t lo, int32_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

// ---- rotary embedding (attn::RopeTable, Q1.14 cos/sin) ----------------------
// round(x / 2^exponent), ties away from zero, for |x| < 2^62; exponent in [1, 62].
ATTN_ALWAYS_INLINE constexpr int64_t rounding_divide_by_pot_s64(int64_t x, int exponent) {
  const int64_t half = int64_t{1} << (exponent - 1);
  return x >= 0 ? (x + half) >> exponent : -((half - x) >> exponent);
}
// The pair (a, b) (zero points removed) turned by the angle whose cos and sin
// are c and s in Q1.14: first = round((a c - b s) / 2^14), second =
// round((b c + a s) / 2^14). int64 products: exact for any int32 a, b and int16 c, s.
struct RotatedPair {
  int32_t first;
  int32_t second;
};
ATTN_ALWAYS_INLINE constexpr RotatedPair rotate_pair_q14(int32_t a, int32_t b, int32_t c, int32_t s) {
  const int64_t x = int64_t{a} * c - int64_t{b} * s;
  const int64_t y = int64_t{b} * c + int64_t{a} * s;
  return RotatedPair{static_cast<int32_t>(rounding_divide_by_pot_s64(x, 14)),
                     static_cast<int32_t>(rounding_divide_by_pot_s64(y, 14))};
}

}  // namespace fp
}  // namespace attn
