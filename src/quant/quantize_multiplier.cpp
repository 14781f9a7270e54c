// quantize_multiplier, softmax_s8_params: offline (converter) arithmetic in
// double. Not part of the fixed-point run-time path.
#include <cmath>
#include <cstdint>

#include "attn/quantize.h"

namespace attn {

Status quantize_multiplier(double real, int32_t* multiplier, int32_t* shift) {
  if (multiplier == nullptr || shift == nullptr) return Status::kNullArgument;
  *multiplier = 0;
  *shift = 0;
  if (!(real >= 0.0) || std::isinf(real)) return Status::kBadQuantParams;  // NaN fails >=
  if (real == 0.0) return Status::kOk;
  int exponent = 0;
  const double f = std::frexp(real, &exponent);                    // real = f * 2^exponent, f in [0.5, 1)
  int64_t q = static_cast<int64_t>(std::round(f * 2147483648.0));  // round half away from zero
  if (q == (int64_t{1} << 31)) {
    q /= 2;
    ++exponent;
  }
  if (exponent < -31) {  // every bit would be shifted out: flush to zero
    return Status::kOk;
  }
  if (exponent > 31) return Status::kBadQuantParams;  // the caller's x << shift would overflow anyway
  *multiplier = static_cast<int32_t>(q);
  *shift = exponent;
  return Status::kOk;
}

Status softmax_s8_params(double beta, double input_scale, SoftmaxS8Params* out) {
  if (out == nullptr) return Status::kNullArgument;
  *out = SoftmaxS8Params();
  constexpr int kIntegerBits = 5;
  const double real = std::fmin(beta * input_scale * static_cast<double>(int64_t{1} << (31 - kIntegerBits)),
                                static_cast<double>((int64_t{1} << 31) - 1));
  if (!(real > 1.0)) return Status::kBadQuantParams;  // TFLite requires a multiplier > 1
  int32_t m = 0;
  int32_t ls = 0;
  ATTN_TRY(quantize_multiplier(real, &m, &ls));
  if (ls < 0 || ls > 31) return Status::kBadQuantParams;
  // The largest |diff| whose rescaled value still fits Q5.26 (floor, as TFLite).
  const double radius = static_cast<double>((1 << kIntegerBits) - 1) *
                        static_cast<double>(int64_t{1} << (31 - kIntegerBits)) /
                        static_cast<double>(int64_t{1} << ls);
  out->input_multiplier = m;
  out->input_left_shift = ls;
  out->diff_min = -static_cast<int32_t>(std::floor(radius));
  return Status::kOk;
}

}  // namespace attn
