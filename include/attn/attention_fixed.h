// attn/attention_fixed.h: the integer-only multi-head attention forwards.
//
// Same computation and row-tiled schedule as forward_f32 (attn/attention.h),
// in integers only: no float instruction or library call at run time, so the
// s8 forward runs on cores without an FPU (Cortex-M0+/M3). Every constant
// (multipliers, shifts, zero points, biases with the zero-point corrections
// folded in, softmax constants) comes from the converter: see
// attn::quantize_attention_s8 / _s16 in attn/quantize.h.
//
// Scheme (real = scale * (q - zero_point)):
//   int8   forward: activations int8 asymmetric, per tensor; weights int8
//          symmetric per output channel; int32 biases and accumulators.
//   int16  forward: activations int16 symmetric; weights int8 per channel;
//          int64 biases and accumulators (CMSIS-NN 16x8).
//   K, V = projections of key / value inputs      -> arena [S, Dkv]
//   per tile of T query rows: Q_t                  -> arena [T, D]
//     per head: s = (Q_h - zq)(K_h - zk)^T  int32  -> arena [T, S]
//               p = fused softmax of s      Q0.15  (in place, int16 over the scores)
//               O_h = requant(p (V_h - zv))        -> arena [T, D]
//     y_t = projection of O_t                      -> caller's output
// The fused softmax (src/kernels/ref/softmax_fused_s32_ref.cpp) is a base-2
// exp with a 256-entry table, exact in integers: identical on every target,
// ~31 instructions per score on a Cortex-M3/M4. src/FIXED_POINT.md has the
// whole arithmetic and the measurements behind it.
// Grouped-query attention (num_kv_heads) as in forward_f32. Rotary embedding
// (config.rope_base != 0): the projected integer K rows (positions 0 .. S-1)
// and Q rows (io.query_position + row, as IoF32::query_position) turn by the
// converter's cos/sin tables (RopeTable), in integers, after their
// requantization. Masks: causal, window and
// key_length as in forward_f32; an additive float mask is not supported in
// fixed point (kUnsupportedMask). Fully masked rows give all-zero weights, so
// their output is the (quantized) output bias.
#pragma once

#include <cstdint>

#include "attn/arena.h"
#include "attn/attention.h"
#include "attn/status.h"

namespace attn {

// One projection y = x W^T + b of the int8 forward, as the converter stores it.
struct ProjectionS8 {
  const int8_t* weight = nullptr;  // [out, in] int8, symmetric per output channel
  const int32_t* bias = nullptr;   // [out] round(b / (s_in * s_w[c])) - zp_in * sum_k weight[c][k]; required
  const int32_t* multiplier = nullptr;  // [out] Q0.31 of s_in * s_w[c] / s_out, >= 0
  const int32_t* shift = nullptr;       // [out] [-31, 30]
  // [out, in / 2] int4 weights, two per byte (low nibble first, attn/FORMAT.md
  // "Int4 weights"; `in` even), in place of `weight` when set: the same
  // arithmetic on values in [-8, 7].
  const uint8_t* weight_s4 = nullptr;
};

// One projection of the int16 forward.
struct ProjectionS16 {
  const int8_t* weight = nullptr;       // [out, in] int8, symmetric per output channel
  const int64_t* bias = nullptr;        // [out] round(b / (s_in * s_w[c])); null: no bias
  const int32_t* multiplier = nullptr;  // [out] Q0.31 of s_in * s_w[c] / s_out, >= 0
  const int32_t* shift = nullptr;       // [out] [-31, 14]
  const uint8_t* weight_s4 = nullptr;   // int4 weights in place of `weight`, as in ProjectionS8
};

// Constants of the fused softmax. With u = max_score - score >= 0 (int32):
//   t = ((u << exp_shift) * exp_multiplier) >> 32 = u * score_step * log2(e) in Q15.16,
//   probability ~ 2^(-t / 2^16) / sum; u > diff_limit gives probability 0.
// (The kernels run the same slope as one 32-bit multiply, u * step in Q4.28
// with step = round(exp_multiplier * 2^(exp_shift - 20)): src/FIXED_POINT.md.)
struct FusedSoftmaxParams {
  uint32_t exp_multiplier = 0;  // [2^31, 2^32)
  int32_t exp_shift = 0;        // [0, 31]
  int32_t diff_limit = 0;       // [0, (2^32 - 1) >> exp_shift]; the converter makes t(diff_limit) < 2^20
  int32_t score_shift = 0;      // scores = round(sum q k / 2^score_shift). int16: head_dim < 2^score_shift
                                // keeps them in int32; int8: usually 0 (raised for very fine score steps).
};

// Rotary embedding tables, from the converter: Q1.14 int16 (16384 = 1.0),
// row p for position p, column i for the pair (i, i + head_dim/2) of each head:
//   cos[p][i] = round(2^14 cos(p * base^(-2i / head_dim))), sin likewise.
// Positions at or past `positions` give kRopePositionOutOfRange.
struct RopeTable {
  const int16_t* cos = nullptr;  // [positions, head_dim / 2], each in [-16384, 16384]
  const int16_t* sin = nullptr;  // [positions, head_dim / 2]
  int32_t positions = 0;         // rows of each table, >= 1
};
constexpr int32_t kRopeFracBits = 14;  // RopeTable entries are Q1.14

// Which masks the context and output ranges were calibrated for (recorded
// by calibrate_attention() in CalibrationRanges, stored in the weights by the
// converter and in the .attn file). A mask that hides more keys than the
// calibration's averages fewer V rows, so its context and output can exceed
// the calibrated ranges and clip: the integer forwards and decodes refuse a
// mask the block does not cover with kMaskNotCalibrated, before writing
// anything. mask_key_length below is the key count or window N named here.
//   kAnyMask          ranges widened for any mask (calibrate_any_mask); also
//                     every file and hand-made weights from before the field
//   kNoMask           only masks that hide no key: not causal, key_length
//                     kAllKeys or S
//   kCausal           only causal masks without window or key padding, with
//                     causal_offset >= N (the calibration's; N = 0: any
//                     offset): a prefill, an unwindowed decode
//   kKeyLength        only non-causal masks that keep exactly the first N keys
//                     (key_length N, or kAllKeys with S = N), N in 0..ATTN_MAX_SEQ
//   kCausalWindow     only causal masks with window N (1..ATTN_MAX_SEQ) and no
//                     key padding (any offset): a windowed prefill or decode
//   kCausalKeyLength  only causal masks without window keeping the first N
//                     keys (key_length N, N in 0..ATTN_MAX_SEQ; any offset)
enum class MaskCoverage : int32_t {
  kAnyMask = 0,
  kNoMask = 1,
  kCausal = 2,
  kKeyLength = 3,
  kCausalWindow = 4,
  kCausalKeyLength = 5,
};

struct WeightsS8 {
  ProjectionS8 q;            // [D, E]     query input -> Q
  ProjectionS8 k;            // [Dkv, kdim]  key input -> K (Dkv = kv_heads * head_dim)
  ProjectionS8 v;            // [Dkv, vdim]  value input -> V
  ProjectionS8 o;            // [E, D]     context -> output
  int32_t q_zero_point = 0;  // zero points of Q, K, V, context, output: [-128, 127]
  int32_t k_zero_point = 0;
  int32_t v_zero_point = 0;
  int32_t context_zero_point = 0;
  int32_t output_zero_point = 0;
  FusedSoftmaxParams softmax;
  int32_t context_multiplier = 0;  // Q0.31 of s_v / (2^15 * s_context): Q0.15 probabilities x V
  int32_t context_shift = 0;       // [-31, 30]
  RopeTable rope;                  // read only when config.rope_base != 0
  MaskCoverage mask_coverage = MaskCoverage::kAnyMask;  // the masks the ranges hold for
  int32_t mask_key_length = 0;  // the N of MaskCoverage (key count, causal offset or window); else 0
};

struct WeightsS16 {
  ProjectionS16 q, k, v, o;  // as in WeightsS8
  FusedSoftmaxParams softmax;
  int32_t context_multiplier = 0;                       // Q0.31 of s_v / (2^15 * s_context)
  int32_t context_shift = 0;                            // [-31, 14]
  RopeTable rope;                                       // read only when config.rope_base != 0
  MaskCoverage mask_coverage = MaskCoverage::kAnyMask;  // as in WeightsS8
  int32_t mask_key_length = 0;
};

// Saturation counters (compile-time, off by default: build the library and its
// callers with -DATTN_SATURATION_COUNTERS=1, CMake option of the same name;
// off, neither this struct nor the `saturation` fields below exist and the
// forwards carry no counting code). With them on, a forward given
// io.saturation adds, per requantization stage, the values that end at the
// activation type's limits (s8 -128 / 127, s16 -32768 / 32767): clamped, or
// landing exactly on a limit. A stage with counts well above zero is being
// clipped: inputs beyond the calibration range. Counting reads the stage's
// output after the kernel has written it; outputs are bit-identical with and
// without it. Zero the struct first; the forward only adds. The decodes do not
// count.
#ifndef ATTN_SATURATION_COUNTERS
#define ATTN_SATURATION_COUNTERS 0
#endif
#if ATTN_SATURATION_COUNTERS
struct SaturationCounts {
  uint64_t q = 0;        // Q projection [L, D] (after rotary embedding)
  uint64_t k = 0;        // K projection [S, Dkv] (after rotary embedding)
  uint64_t v = 0;        // V projection [S, Dkv]
  uint64_t context = 0;  // P V requantized [L, D]
  uint64_t output = 0;   // output projection [L, E]
};
#endif

// Dense, row-major int8 inputs and outputs, quantized with the converter's
// (scale, zero point) of each tensor (attn::ActivationQuant).
struct IoS8 {
  const int8_t* query = nullptr;  // [L, E]
  const int8_t* key = nullptr;    // [S, kdim]; for self-attention pass query
  const int8_t* value = nullptr;  // [S, vdim]; for self-attention pass query
  int8_t* output = nullptr;       // [L, E]; must not overlap the inputs
  int32_t query_position = 0;     // rotary position of query row 0 (keys sit at 0 .. S-1), >= 0
#if ATTN_SATURATION_COUNTERS
  SaturationCounts* saturation = nullptr;  // optional: counts added per stage
#endif
};

struct IoS16 {
  const int16_t* query = nullptr;  // [L, E]
  const int16_t* key = nullptr;    // [S, kdim]
  const int16_t* value = nullptr;  // [S, vdim]
  int16_t* output = nullptr;       // [L, E]
  int32_t query_position = 0;      // rotary position of query row 0 (keys sit at 0 .. S-1), >= 0
#if ATTN_SATURATION_COUNTERS
  SaturationCounts* saturation = nullptr;  // optional: counts added per stage
#endif
};

// One integer forward. `plan` from plan_attention(config, DType::kS8 (kS16), L, S).
// Carves plan.arena_bytes from `arena` (before writing anything) and gives
// them back on return. Errors: kNullArgument, kBadDtype / kPlanMismatch,
// kBadKeyPadding, kBadCausalOffset, kBadWindow, kUnsupportedMask (additive mask),
// kBadQuantParams (a multiplier, shift, zero point or softmax constant out of
// range; rope tables with positions < 1), kBiasOutOfRange (a bias the forward
// reads beyond the accumulator bound of attn/FORMAT.md, "Bias bound": s8
// |bias| + in * 128 * 128 <= INT32_MAX, s16 |bias| + in * 32768 * 128 <=
// INT64_MAX / 0x7FFF, `in` the projection's input width; checked here with the
// multipliers, one compare per channel, so hand-made weights cannot overflow
// the kernels), kBadHeadDim (int8: head_dim >= 2^14,
// scores could leave int32), kArenaTooSmall; with rotary embedding also
// kNullArgument (a table), kBadPosition (query_position < 0) and
// kRopePositionOutOfRange (query_position + L or S above rope.positions);
// kMaskNotCalibrated (a mask outside weights.mask_coverage, MaskCoverage above).
Status forward_s8(const Plan& plan, const WeightsS8& weights, const Mask& mask, const IoS8& io, Arena& arena);
Status forward_s16(const Plan& plan, const WeightsS16& weights, const Mask& mask, const IoS16& io,
                   Arena& arena);

}  // namespace attn
