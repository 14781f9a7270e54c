// core/bias_bound.h: the bias bound of the integer projections
// (include/attn/FORMAT.md, "Bias bound"), one definition for the loader
// (format/), every integer forward's weight check (attention/, model/) and the
// converter (quant/).
//
// A projection over `in` inputs adds at most `in` products to its bias, each
// at most 128 * 128 in magnitude for s8 (int8 inputs, the zero point folded
// into the bias; int8 weights) and 32768 * 128 for s16. s8: the int32
// accumulator must not overflow. s16: the int64 accumulator times the Q0.15
// multiplier (at most 0x7FFF) in fp::requantize_s64 must fit int64. Checked
// once by the loader and by every forward's weight check (one compare per
// channel), so the kernels' inner loops carry no check.
#pragma once

#include <cstdint>

#include "attn/config.h"

namespace attn {
namespace detail {

constexpr int64_t kBiasTermS8 = int64_t{128} * 128;
constexpr int64_t kBiasTermS16 = int64_t{32768} * 128;
constexpr int64_t kAccLimitS8 = INT32_MAX;
constexpr int64_t kAccLimitS16 = INT64_MAX / 0x7FFF;
static_assert(ATTN_MAX_DIM <= 65535, "the bias bound's in * 2^14 must stay below 2^31 - 1");
// The s8 limit in 32 bits (no int64 code on a Cortex-M): in <= ATTN_MAX_DIM
// keeps lim in (0, 2^31) and lim + b in [0, 2 lim] iff |b| <= lim.
constexpr uint32_t bias_limit_s8(int32_t in) {
  return static_cast<uint32_t>(kAccLimitS8) - static_cast<uint32_t>(in) * static_cast<uint32_t>(kBiasTermS8);
}
constexpr bool bias_in_range(int32_t b, int32_t in) {
  const uint32_t lim = bias_limit_s8(in);
  return static_cast<uint32_t>(b) + lim <= 2u * lim;
}
constexpr bool bias_in_range(int64_t b, int32_t in) {
  const int64_t lim = kAccLimitS16 - int64_t{in} * kBiasTermS16;
  return b >= -lim && b <= lim;
}

}  // namespace detail
}  // namespace attn
