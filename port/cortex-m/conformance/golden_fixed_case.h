// golden_fixed_case.h: one embedded fixed-point golden case, as
// tools/fixtures/golden_fixed/golden_fixed_to_c.cpp writes it: a golden case of
// tests/data/golden quantized on the host (calibrated on its own inputs, C++
// quantizer), its quantized inputs, and the output forward_s8 / forward_s16
// computed on the host with the ref kernels. The board must reproduce the
// expected output byte for byte. Arrays are row-major; D = H * head_dim,
// Dkv = kv_heads * head_dim.
#pragma once

#include <cstdint>

#include "attn/attention.h"

#ifndef ATTN_GOLDEN_SECTION
#define ATTN_GOLDEN_SECTION __attribute__((section(".golden")))
#endif

// Config, dtype and shape only, so that buffers can be sized at compile time.
struct FixedShape {
  int32_t bits;  // 8: forward_s8, 16: forward_s16
  int32_t E, H, head_dim, kdim, vdim, kv_heads;
  bool bias;
  int32_t L, S;
  float rope_base;  // 0: no rotary embedding (copied, never computed with: no float arithmetic)

  constexpr attn::DType dtype() const { return bits == 8 ? attn::DType::kS8 : attn::DType::kS16; }
  // AttentionConfig's fields in their order (attn/attention.h).
  constexpr attn::AttentionConfig config() const {
    return {E, H, head_dim, kdim, vdim, bias, kv_heads, rope_base};
  }
};

// One projection: ProjectionS8 (bias int32, required) or ProjectionS16 (bias
// int64, may be null), by the case's bits.
struct FixedProjection {
  const int8_t* weight;       // [out, in]
  const void* bias;           // [out] int32 (s8) or int64 (s16)
  const int32_t* multiplier;  // [out]
  const int32_t* shift;       // [out]
};

struct GoldenCaseFixed {
  const char* name;  // golden file name
  FixedShape shape;
  bool causal;
  int32_t causal_offset;
  int32_t window;
  int32_t key_length;  // -1: no key padding
  FixedProjection q, k, v, o;
  int32_t q_zero_point, k_zero_point, v_zero_point, context_zero_point, output_zero_point;  // s8 only
  uint32_t exp_multiplier;
  int32_t exp_shift, diff_limit, score_shift;
  int32_t context_multiplier, context_shift;
  const int16_t* rope_cos;  // [rope_positions, head_dim / 2] Q1.14, null without rotary embedding
  const int16_t* rope_sin;
  int32_t rope_positions;
  const void* query;     // [L, E] int8 / int16
  const void* key;       // [S, kdim]
  const void* value;     // [S, vdim]
  const void* expected;  // [L, E] the host's forward output, int8 / int16
};
