// kernels/requantize.h: fp::multiply_by_quantized_multiplier for the SIMD
// kernels, in fewer instructions and with the same bits, for multiplier >= 0
// (the forwards and the public ops validate that before any kernel runs).
#pragma once

#include <cstdint>

#include "attn/tensor.h"  // ATTN_ALWAYS_INLINE

namespace attn {
namespace detail {
namespace fast {

// fp::multiply_by_quantized_multiplier for multiplier >= 0 (always so after
// validation), in fewer instructions: SRDHM's "(ab + nudge) / 2^31, truncated"
// equals floor((ab + 2^30) / 2^31) for both signs of ab, and the saturating
// case needs multiplier == INT32_MIN; the rounding right shift (half away
// from zero) is floor((v + 2^(r-1) - [v < 0]) / 2^r). Bit-exact.
ATTN_ALWAYS_INLINE int32_t requantize(int32_t x, int32_t multiplier, int32_t shift) {
  const int32_t left = shift > 0 ? shift : 0;
  const int32_t right = shift > 0 ? 0 : -shift;
  const int64_t ab =
      static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(x) << left)) * multiplier;
  const int32_t v = static_cast<int32_t>((ab + (int64_t{1} << 30)) >> 31);
  if (right == 0) return v;
  return static_cast<int32_t>((static_cast<int64_t>(v) + (int64_t{1} << (right - 1)) - (v < 0 ? 1 : 0)) >>
                              right);
}

// fast::requantize for one channel, with its constants worked out once
// (per output channel, not per output). For shift <= -2 (right = -shift >= 2)
// the two roundings of fast::requantize fold into one 64-bit sum:
//   floor((x m + 2^30 + 2^(30 + right) - [x < 0] 2^31) / 2^(31 + right)),
// whose constant part has low word 2^30 + [x < 0] 2^31 and high word
// 2^(right - 2) - [x < 0]: two ALU instructions, one SMLAL and one shift of
// the high word. ([x < 0] stands for fast::requantize's [v < 0]: the two
// differ only when -2^30 <= x m < 0, where both give the same floor for
// right >= 1; tests/requant_fold_test.cpp checks the identity.) Other shifts
// take fast::requantize itself.
struct Requant {
  int32_t multiplier;
  int32_t shift;     // fast::requantize's shift
  int32_t hi_shift;  // right - 1
  int32_t hi_base;   // 2^(right - 2)

  Requant(int32_t m, int32_t s)
      : multiplier(m),
        shift(s),
        hi_shift(s <= -2 ? -s - 1 : 0),
        hi_base(s <= -2 ? int32_t{1} << (-s - 2) : 0) {}

  int32_t operator()(int32_t x) const { return shift > -2 ? requantize(x, multiplier, shift) : folded(x); }
  // The folded form alone, for shift <= -2 (callers that test the shift once).
  int32_t folded(int32_t x) const {
    const uint32_t lo = (static_cast<uint32_t>(x) & 0x80000000u) | 0x40000000u;
    const uint32_t hi = static_cast<uint32_t>(hi_base + (x >> 31));
    const int64_t base = static_cast<int64_t>((static_cast<uint64_t>(hi) << 32) | lo);
    const int64_t acc = base + static_cast<int64_t>(x) * multiplier;
    return static_cast<int32_t>(acc >> 32) >> hi_shift;
  }
};

}  // namespace fast
}  // namespace detail
}  // namespace attn
