// internal/kernels_model_fixed.h: the integer kernels of whole models
// (attn/transformer_fixed.h) besides the attention block's: norms, the
// activation tables, the residual stream's rescales and the LM head.
// Registered in internal/kernel_table.h; `ref` only so far. No checks: the
// forwards validate the constants once (transformer_fixed.cpp).
#pragma once

#include <cstdint>

#include "attn/kernels_fixed.h"
#include "attn/transformer.h"
#include "attn/transformer_fixed.h"
#include "internal/fixed_point.h"

namespace attn {
namespace detail {

// round(v * m * 2^(shift - 31)), ties away from zero, in int64: |v| < 2^31,
// m in [0, 2^31), shift in [-31, 30] (so the product stays below 2^62).
constexpr int64_t rescale_q31(int64_t v, int32_t m, int32_t shift) {
  return fp::rounding_divide_by_pot_s64(v * m, 31 - shift);
}
constexpr int32_t saturate_s32(int64_t v) {
  return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : static_cast<int32_t>(v);
}
// The 16x8 requantization (fp::requantize_s64) without its int32 narrowing:
// round(acc * reduce_multiplier_q15(m) * 2^(shift - 15)), saturated to int32;
// shift in [-31, 14], |acc| < 2^47.
constexpr int32_t rescale_q15_s64(int64_t acc, int32_t m, int32_t shift) {
  return saturate_s32(fp::rounding_divide_by_pot_s64(acc * fp::reduce_multiplier_q15(m), 15 - shift));
}

// floor(sqrt(v)), exact, for any v < 2^64 (bit by bit).
constexpr uint64_t isqrt_u64(uint64_t v) {
  uint64_t r = 0;
  uint64_t bit = uint64_t{1} << 62;
  while (bit > v) bit >>= 2;
  while (bit != 0) {
    if (v >= r + bit) {
      v -= r + bit;
      r = (r >> 1) + bit;
    } else {
      r >>= 1;
    }
    bit >>= 2;
  }
  return r;
}

// ---- norms (src/kernels/norm/norm_fixed_ref.cpp) ------------------------------
// Row r of y = the norm of row r of x (int32 residual rows), NormFixed's
// arithmetic; y may be x (int32 output) for an in-place norm.
void norm_s8_ref(ConstMatS32 x, NormKind kind, const NormFixed& p, MatS8 y);
void norm_s16_ref(ConstMatS32 x, NormKind kind, const NormFixed& p, MatS16 y);
void norm_s32_ref(ConstMatS32 x, NormKind kind, const NormFixed& p, MatS32 y);

// ---- activations (src/kernels/activation/activation_fixed_ref.cpp) --------------
// In place over h1 [rows, F]: FfnS8 / FfnS16's arithmetic.
void act_table_s8_ref(MatS8 h1, const int8_t* table);
void act_gate_s8_ref(MatS8 h1, ConstMatS8 h3, const int16_t* table, int32_t h3_zero_point, int32_t multiplier,
                     int32_t shift, int32_t g_zero_point);
void act_table_s16_ref(MatS16 h1, const int32_t* table, int32_t multiplier, int32_t shift);
void act_gate_s16_ref(MatS16 h1, ConstMatS16 h3, const int32_t* table, int32_t multiplier, int32_t shift);

// ---- residual stream (src/kernels/residual/residual_fixed_ref.cpp) -------------
// x = sat32(x + round((y - zp) * ratio)), RescaleFixed's "to the residual".
void residual_add_s8_ref(MatS32 x, ConstMatS8 y, const RescaleFixed& r);
void residual_add_s16_ref(MatS32 x, ConstMatS16 y, const RescaleFixed& r);
// y = clamp(zp + round(x * ratio)), RescaleFixed's "to an activation".
void residual_to_s8_ref(ConstMatS32 x, const RescaleFixed& r, MatS8 y);
void residual_to_s16_ref(ConstMatS32 x, const RescaleFixed& r, MatS16 y);

// ---- W2 into the residual (src/kernels/linear/linear_residual_fixed_ref.cpp) ------
// r [M, N] = sat32(r + rescale of x [M, K] w^T), w [N, K] int8: FfnS8 / FfnS16's w2.
void linear_residual_s8_ref(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                            const int32_t* shift, MatS32 r);
void linear_residual_s16_ref(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const int32_t* multiplier,
                             const int32_t* shift, MatS32 r);
// SIMD rows (bit-exact with the ref; internal/dot_rows_s8.h): DSP (M4, M7, M33;
// K > dsp::kDotRowsMaxK through the ref), Helium (M55).
void linear_residual_s8_dsp(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                            const int32_t* shift, MatS32 r);
void linear_residual_s8_mve(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                            const int32_t* shift, MatS32 r);

// ---- the LM head (src/kernels/linear/logits_fixed_ref.cpp) ----------------------
// y [M, V] int32 logits = rescale of x [M, E] w^T (w [V, E] int8), see
// TransformerWeightsFixed::head.
void logits_s8_ref(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                   const int32_t* shift, MatS32 y);
void logits_s16_ref(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const int32_t* multiplier,
                    const int32_t* shift, MatS32 y);
// SIMD rows, as linear_residual_s8's.
void logits_s8_dsp(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                   const int32_t* shift, MatS32 y);
void logits_s8_mve(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                   const int32_t* shift, MatS32 y);

}  // namespace detail
}  // namespace attn
