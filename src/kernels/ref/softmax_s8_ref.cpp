// softmax, int8 -> int8 (scale 1/256, zero point -128), portable scalar:
// TFLite's SOFTMAX int8 reference, with gemmlowp's exp and 1/(1+x).
#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"

namespace attn {
namespace detail {
namespace {

constexpr int kScaledDiffIntegerBits = 5;     // exp input: Q5.26
constexpr int kAccumulationIntegerBits = 12;  // sum of exps: Q12.19

// exp(beta * in_scale * diff) in Q0.31, for diff >= diff_min.
int32_t exp_of_diff(int32_t diff, const SoftmaxS8Params& p) {
  const int32_t scaled =
      fp::multiply_by_quantized_multiplier_gt_one(diff, p.input_multiplier, p.input_left_shift);
  return fp::exp_on_negative_values(scaled, kScaledDiffIntegerBits);
}

}  // namespace

void softmax_s8_ref(ConstMatS8 x, const SoftmaxS8Params& p, MatS8 y) {
  for (int32_t m = 0; m < x.rows; ++m) {
    const int8_t* xr = x.row(m);  // [N]
    int8_t* yr = y.row(m);        // [N]
    int32_t max = -128;
    for (int32_t j = 0; j < x.cols; ++j) max = xr[j] > max ? xr[j] : max;

    int32_t sum = 0;  // Q12.19; at most N * 2^19 (N <= 4095 keeps it below 2^31)
    for (int32_t j = 0; j < x.cols; ++j) {
      const int32_t diff = int32_t{xr[j]} - max;
      if (diff >= p.diff_min) {
        sum = fp::wrap_add(sum, fp::rounding_divide_by_pot(exp_of_diff(diff, p), kAccumulationIntegerBits));
      }
    }
    // sum = 2^(12 - headroom) * (1 + x), x in [0, 1): 1/sum from 1/(1+x).
    const int headroom = fp::count_leading_zeros(static_cast<uint32_t>(sum));
    const int32_t shifted_sum_minus_one =
        static_cast<int32_t>((static_cast<uint32_t>(sum) << headroom) - (uint32_t{1} << 31));
    const int32_t recip = fp::one_over_one_plus_x_for_x_in_0_1(shifted_sum_minus_one);
    const int out_shift = (kAccumulationIntegerBits - headroom) + 31 - 8;

    for (int32_t j = 0; j < x.cols; ++j) {
      const int32_t diff = int32_t{xr[j]} - max;
      int32_t out = -128;
      if (diff >= p.diff_min) {
        const int32_t prob = fp::rounding_divide_by_pot(
            fp::saturating_rounding_doubling_high_mul(recip, exp_of_diff(diff, p)), out_shift);
        out = fp::clamp_i32(prob - 128, -128, 127);
      }
      yr[j] = static_cast<int8_t>(out);
    }
  }
}

}  // namespace detail
}  // namespace attn
