// The fused attention softmax, int32 scores -> Q0.15 probabilities, portable
// scalar. Exact in integers, so every target computes the same bits.
//
// For a row with maximum score smax over its visible keys, key j gets
//   u   = smax - s[j]                                (>= 0)
//   e_j = 0 if u > limit, else
//   t   = u * step (< 2^32 for u <= limit)            u * score_step * log2(e), Q4.28
//   e_j = ((2 * kExp2Table[(t >> 20) & 255] >> (t >> 28)) + 1) >> 1
//                                                    2^(-t / 2^28) in Q0.16, rounded
// with step = round(exp_multiplier * 2^(exp_shift - 20)) (at most 2^32 - 1)
// and limit = min(diff_limit, (2^32 - 1) / step) (fused_exp_constants).
//   p_j = (e_j * R + 2^31) >> 32, R ~ (1 - 2^-15) 2^47 / sum_j e_j, so p_j <= 32767
// R comes from gemmlowp's one_over_one_plus_x (sum normalized to [1, 2) by
// its leading zeros): no division. e_max = 65447 and S <= 65536 keep the sum
// of exps in a uint32 and R below 2^32.
//
// Cost on a Cortex-M4, GCC 12.2 -O3, QEMU instruction count (port/cortex-m
// counter), everything included (max, exp, sum, reciprocal, normalization):
// 33.6 / 32.3 / 31.3 instructions per score at S = 64 / 128 / 512, against
// ~527 for TFLite's exp_on_negative_values alone. (A first version with
// MultiplyByQuantizedMultiplier, a 64-entry interpolated table and 64-bit
// variable shifts took 86.)
//
// Probability precision: Q0.15, by measurement. tests/attention_fixed_test.cpp
// (random unit-scale cases, output SQNR against the float64 forward) with
// kProbBits set to 8 / 12 / 15, on the S = 128 case:
//   s8:  23.4 / 31.1 / 31.2 dB   (ideal fake-quant with exact probabilities: 31.1)
//   s16: 24.2 / 40.3 / 41.0 dB   (ideal: 41.1)
// and medians over the eleven cases: s8 29.2 / 30.8 / 30.9, s16 32.2 / 39.7 / 39.7.
// 8-bit probabilities (TFLite's uint8 softmax output) lose ~8 dB at S = 128;
// 15 bits lose nothing measurable, still fit a 16x16 MAC (SMLAD) and keep
// the s8 P.V sum in int32: sum_j p_j <= 2^15 + S/2, times |v - zv| <= 255.
#include <cstring>

#include "kernels/exp2_table.h"
#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"

namespace attn {
namespace detail {
namespace {

// fp::saturating_rounding_doubling_high_mul(a, b) for (a, b) != (INT32_MIN,
// INT32_MIN): its sign-dependent nudge and truncating division are one
// arithmetic shift of ab + 2^30 (for ab < 0, truncating (ab + 1 - 2^30) / 2^31
// rounds up, which is flooring (ab + 2^30) / 2^31).
inline int32_t srdhm(int32_t a, int32_t b) {
  return static_cast<int32_t>((static_cast<int64_t>(a) * b + (int64_t{1} << 30)) >> 31);
}

// fp::one_over_one_plus_x_for_x_in_0_1(a) for a in [0, 2^31), the same
// three Newton-Raphson steps without the saturation and sign branches that
// cannot trigger on that domain (all 2^31 inputs checked equal): a third of
// the instructions on a Cortex-M4, paid once per softmax row.
inline int32_t one_over_one_plus_a(int32_t a) {
  constexpr uint32_t k48Over17 = 1515870810;     // Q2.29
  constexpr int32_t kNeg32Over17 = -1010580540;  // Q2.29
  const int32_t half_denominator =
      static_cast<int32_t>((static_cast<uint32_t>(a) + (uint32_t{1} << 31)) >> 1);
  uint32_t x = k48Over17 + static_cast<uint32_t>(srdhm(half_denominator, kNeg32Over17));  // Q2.29
  for (int i = 0; i < 3; ++i) {
    const uint32_t one_minus =
        (uint32_t{1} << 29) - static_cast<uint32_t>(srdhm(half_denominator, static_cast<int32_t>(x)));
    x += static_cast<uint32_t>(srdhm(static_cast<int32_t>(x), static_cast<int32_t>(one_minus))) << 2;
  }
  return fp::saturating_shift_left(static_cast<int32_t>(x), 1);  // saturates for a < 4
}

}  // namespace

uint32_t fused_softmax_reciprocal(uint32_t sum) {
  // sum = 2^(31 - h) (1 + a), a in [0, 1): R = 2^(32 + P) / sum = R31 * 2^(h + P - 30)
  // with R31 = 1 / (1 + a) in Q0.31, P = kProbBits and h in [0, 16] (sum >= e_max = 65447).
  const int h = fp::count_leading_zeros(sum);
  const int32_t a = static_cast<int32_t>((sum << h) - (uint32_t{1} << 31));
  const uint32_t r31 = static_cast<uint32_t>(one_over_one_plus_a(a));
  const int rs = h + kProbBits - 30;  // <= 1: R < 2^32
  const uint32_t r = rs >= 0 ? r31 << rs : r31 >> -rs;
  // Scaled by 1 - 2^-15 so that p_j <= 32767 needs no clamp: a key holding
  // all the mass gets (2^15 - 1) + 1/2 + (r31's error, < 1e-8 relative), floored.
  return r - (r >> kProbBits);
}

namespace {

// The exps over row[begin, end) (begin < end), in place; returns the
// normalizer. Entries outside the range are left as they are.
uint32_t exps_pass(int32_t* row, int32_t begin, int32_t end, const FusedSoftmax& sm) {
  int32_t smax = row[begin];
  for (int32_t j = begin + 1; j < end; ++j) smax = row[j] > smax ? row[j] : smax;

  // e_j in place of s_j, and their sum. (Constants in a local copy: row
  // stores could alias sm as far as the compiler knows.)
  const FusedExp fx = fused_exp_constants(sm);
  uint32_t sum = 0;
  for (int32_t j = begin; j < end; ++j) {
    const uint32_t u = static_cast<uint32_t>(smax) - static_cast<uint32_t>(row[j]);  // < 2^31
    const uint32_t e = fused_exp(u, fx.step, fx.limit);
    row[j] = static_cast<int32_t>(e);
    sum += e;
  }
  return fused_softmax_reciprocal(sum);
}

}  // namespace

uint32_t softmax_exps_row_ref(int32_t* row, int32_t begin, int32_t end, int32_t n, const FusedSoftmax& sm) {
  for (int32_t j = 0; j < begin; ++j) row[j] = 0;
  for (int32_t j = end; j < n; ++j) row[j] = 0;
  return begin < end ? exps_pass(row, begin, end, sm) : 0;  // fully masked: all-zero weights
}

void softmax_fused_row_ref(int32_t* row, int32_t begin, int32_t end, int32_t n, const FusedSoftmax& sm) {
  // Output: int16 probabilities [n] over the first 2n bytes of row.
  if (begin >= end) {  // fully masked: all-zero weights
    for (int32_t j = 0; j < n; ++j) store_fused_prob(row, j, 0);
    return;
  }
  // Pass 1: e_j over s_j (0 outside [begin, end)), and the normalizer.
  const uint32_t recip = exps_pass(row, begin, end, sm);

  // Pass 2: p_j as int16 over the start of the row (entry j's bytes are
  // inside entry j / 2 <= j: already read, or masked).
  for (int32_t j = begin; j < end; ++j) {
    store_fused_prob(row, j, fused_prob(static_cast<uint32_t>(row[j]), recip));
  }
  for (int32_t j = 0; j < begin; ++j) store_fused_prob(row, j, 0);
  for (int32_t j = end; j < n; ++j) store_fused_prob(row, j, 0);
}

}  // namespace detail
}  // namespace attn
