// port/fixed_dtype.h: the types and forward of the integer dtype an image is
// built for (FixedDType<8>: s8, FixedDType<16>: s16), so that one source can
// be compiled for both (images/minimal_fixed.cpp, cost/cost_fixed.cpp).
#pragma once

#include <cstdint>

#include "attn/attention_fixed.h"

template <int Bits>
struct FixedDType;

template <>
struct FixedDType<8> {
  using Act = int8_t;    // activations
  using Bias = int32_t;  // biases
  using Weights = attn::WeightsS8;
  using Io = attn::IoS8;
  static constexpr attn::DType kDType = attn::DType::kS8;
  static constexpr const char* kName = "s8";
  static constexpr auto kForward = attn::forward_s8;
};

template <>
struct FixedDType<16> {
  using Act = int16_t;
  using Bias = int64_t;
  using Weights = attn::WeightsS16;
  using Io = attn::IoS16;
  static constexpr attn::DType kDType = attn::DType::kS16;
  static constexpr const char* kName = "s16";
  static constexpr auto kForward = attn::forward_s16;
};
