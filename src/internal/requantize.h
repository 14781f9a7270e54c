// internal/requantize.h: fp::multiply_by_quantized_multiplier for the SIMD
// kernels, in fewer instructions and with the same bits, for multiplier >= 0
// (the forwards and the public ops validate that before any kernel runs).
#pragma once

#include <cstdint>

namespace attn {
namespace detail {
namespace fast {

// fp::multiply_by_quantized_multiplier for multiplier >= 0 (always so after
// validation), in fewer instructions: SRDHM's "(ab + nudge) / 2^31, truncated"
// equals floor((ab + 2^30) / 2^31) for both signs of ab, and the saturating
// case needs multiplier == INT32_MIN; the rounding right shift (half away
// from zero) is floor((v + 2^(r-1) - [v < 0]) / 2^r). Bit-exact.
inline int32_t requantize(int32_t x, int32_t multiplier, int32_t shift) {
  const int32_t left = shift > 0 ? shift : 0;
  const int32_t right = shift > 0 ? 0 : -shift;
  const int64_t ab =
      static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(x) << left)) * multiplier;
  const int32_t v = static_cast<int32_t>((ab + (int64_t{1} << 30)) >> 31);
  if (right == 0) return v;
  return static_cast<int32_t>((static_cast<int64_t>(v) + (int64_t{1} << (right - 1)) - (v < 0 ? 1 : 0)) >>
                              right);
}

}  // namespace fast
}  // namespace detail
}  // namespace attn
