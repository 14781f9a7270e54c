// The fused attention softmax, int32 scores -> Q0.15 probabilities, portable
// scalar. Exact in integers, so every target computes the same bits.
//
// For a row with maximum score smax, key j gets
//   u   = smax - s[j]                         (>= 0)
//   t   = MBQM(u, exp_multiplier, exp_shift)  u * score_scale * log2(e) in Q15.16
//         (0 when u > diff_limit: exp below 2^-16, and t could overflow)
//   t   = 2^16 n + r:  2^(-t/2^16) = 2^-n * 2^(-r/2^16)
//   x   = 2^(-r/2^16) * 2^22 by linear interpolation in kExp2Table (64 steps)
//   e_j = round_half_up(x / 2^(7 + n))        Q0.15, e_max = 32768, 0 for n >= 16
//   p_j = round_half_up(e_j * 2^15 / sum_j e_j), at most 32767
// The reciprocal of the sum comes from gemmlowp's one_over_one_plus_x (the
// sum normalized to [1, 2) by its leading zeros), so no division at all.
// About 20 instructions per score on a Cortex-M4 (max, exp, sum, normalize)
// against ~500 for TFLite's exp_on_negative_values.
//
// Probability precision: Q0.15, by measurement. tests/attention_fixed_test.cpp
// (random unit-scale cases, output SQNR against the float64 forward) with
// kProbBits set to 8 / 12 / 15, on the S = 128 case:
//   s8:  23.5 / 30.9 / 31.2 dB   (ideal fake-quant with exact probabilities: 31.1)
//   s16: 24.1 / 40.4 / 41.1 dB   (ideal: 41.1)
// and medians over the nine cases: s8 29.3 / 30.9 / 30.9, s16 32.0 / 39.3 / 39.4.
// 8-bit probabilities (TFLite's uint8 softmax output) lose ~8 dB at S = 128;
// 15 bits lose nothing measurable, still fit a 16x16 MAC (SMLAD) and keep
// the s8 P.V sum in int32: sum_j p_j <= 2^15 + S/2, times |v - zv| <= 255.
#include <cstring>

#include "internal/exp2_table.h"
#include "internal/fixed_point.h"
#include "internal/kernels_fixed.h"

namespace attn {
namespace detail {
namespace {

// Store probability j as int16 at bytes [2j, 2j + 2) of the row, through
// memcpy: the row is an int32 array, and memcpy is the aliasing-safe way to
// reuse its storage as int16 (it compiles to one 16-bit store).
inline void store_prob(int32_t* row, int32_t j, int32_t p) {
  const int16_t v = static_cast<int16_t>(p);
  std::memcpy(reinterpret_cast<unsigned char*>(row) + 2 * static_cast<ptrdiff_t>(j), &v, sizeof v);
}

}  // namespace

void softmax_fused_row_ref(int32_t* row, int32_t n_valid, int32_t n, const FusedSoftmax& sm) {
  // Output: int16 probabilities [n] over the first 2n bytes of row.
  if (n_valid <= 0) {  // fully masked: all-zero weights
    for (int32_t j = 0; j < n; ++j) store_prob(row, j, 0);
    return;
  }
  int32_t smax = row[0];
  for (int32_t j = 1; j < n_valid; ++j) smax = row[j] > smax ? row[j] : smax;

  // Pass 1: e_j in place of s_j (int32), and their sum (<= 2^15 * S).
  uint32_t sum = 0;
  for (int32_t j = 0; j < n_valid; ++j) {
    const int32_t u = fp::wrap_sub(smax, row[j]);  // >= 0, < 2^31 for scores in (-2^30, 2^30)
    int32_t e = 0;
    if (u <= sm.diff_limit) {
      const int32_t t =
          fp::multiply_by_quantized_multiplier(u, sm.exp_multiplier, sm.exp_shift);  // [0, 2^20)
      const int32_t whole = t >> kExp2FracBits;                                      // n in [0, 15]
      const int32_t frac = t & ((1 << kExp2FracBits) - 1);                           // r
      const int32_t idx = frac >> (kExp2FracBits - kExp2TableBits);                  // [0, 63]
      const int32_t w = frac & ((1 << (kExp2FracBits - kExp2TableBits)) - 1);        // [0, 1023]
      const int32_t lo = kExp2Table[idx];
      const int32_t step = lo - kExp2Table[idx + 1];  // < 2^16
      const int32_t x = lo - ((step * w + (1 << 9)) >> (kExp2FracBits - kExp2TableBits));
      const int shift = (kExp2TableOne - kExpBits) + whole;  // [7, 22]
      e = (x + (int32_t{1} << (shift - 1))) >> shift;
    }
    row[j] = e;
    sum += static_cast<uint32_t>(e);
  }

  // sum = 2^(31 - h) * (1 + a), a in [0, 1); 1/(1 + a) in Q0.31.
  const int h = fp::count_leading_zeros(sum);  // [0, 16]: the max key alone gives 2^15
  const int32_t a = static_cast<int32_t>((sum << h) - (uint32_t{1} << 31));
  const uint64_t recip = static_cast<uint64_t>(fp::one_over_one_plus_x_for_x_in_0_1(a));
  const int shift = 62 - kProbBits - h;  // p = e * recip / 2^shift
  const uint64_t half = uint64_t{1} << (shift - 1);
  constexpr int32_t kProbMax = (1 << kProbBits) - 1;

  // Pass 2: p_j as int16 over the start of the row (entry j's bytes are
  // inside entries <= j, already read).
  for (int32_t j = 0; j < n_valid; ++j) {
    const uint64_t pj = (static_cast<uint64_t>(row[j]) * recip + half) >> shift;
    store_prob(row, j, pj < kProbMax ? static_cast<int32_t>(pj) : kProbMax);
  }
  for (int32_t j = n_valid; j < n; ++j) store_prob(row, j, 0);
}

}  // namespace detail
}  // namespace attn
