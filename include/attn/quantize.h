// attn/quantize.h: OFFLINE quantization helpers, for the converter (`attn
// quantize`) and the tests. They use double; nothing in the fixed-point run
// time path (forward_s8 / forward_s16, the *_s8 / *_s16 kernels) calls them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/arena.h"
#include "attn/attention.h"
#include "attn/attention_fixed.h"
#include "attn/kernels_fixed.h"
#include "attn/status.h"

namespace attn {

// TFLite's QuantizeMultiplier: real = multiplier * 2^(shift - 31), with
// multiplier in [2^30, 2^31): f = frexp(real, &shift), multiplier =
// round_half_away(f * 2^31) (2^31 -> 2^30 with shift + 1); reals below
// 2^-32 flush to (0, 0). The one implementation, shared by the converter and
// the tests. Errors: kBadQuantParams for a negative, NaN or infinite real,
// kNullArgument.
Status quantize_multiplier(double real, int32_t* multiplier, int32_t* shift);

// Parameters of softmax_s8 for softmax(beta * x) on an int8 input of scale
// input_scale (TFLite PreprocessSoftmaxScaling + CalculateInputRadius with 5
// integer bits). Errors: kBadQuantParams (beta * input_scale not > 0 or too
// small for a left shift), kNullArgument.
Status softmax_s8_params(double beta, double input_scale, SoftmaxS8Params* out);

// ---- whole attention blocks ----------------------------------------------

// Observed float range of one tensor (min <= max); widened to include 0.
struct Range {
  float min = 0.0f;
  float max = 0.0f;
};

// Calibration: the ranges of every stage of the float forward over the
// calibration set (x, key/value inputs, Q, K, V before the 1/sqrt(hd) scale,
// the concatenated context, y). attn::calibrate_attention() collects them.
// With rotary embedding, q and k cover Q and K both before and after the
// rotation: the integer forward holds both on the same grid.
//
// The ranges also say which masks they hold for, and quantize_attention_*
// stores that in the weights (attn/attention_fixed.h, MaskCoverage), so the
// integer forwards refuse the masks that would clip:
//  - calibrate_attention() records the mask of its examples: kNoMask,
//    kCausal (N: the smallest causal_offset), kKeyLength, kCausalWindow or
//    kCausalKeyLength with its N;
//  - examples that ran with different masks, or with a mask none of those
//    describes (a window or key padding at a causal_offset, a window with key
//    padding, an additive mask),
//    set mixed_masks, and quantize_attention_* then refuses the ranges with
//    kMaskNotCalibrated: widen them with calibrate_any_mask();
//  - calibrate_any_mask() makes them kAnyMask, for every later example too;
//  - ranges set by hand hold kAnyMask unless the caller says otherwise.
struct CalibrationRanges {
  Range query, key, value;                              // inputs
  Range q, k, v;                                        // projections
  Range context;                                        // P V, heads concatenated
  Range output;                                         // y
  MaskCoverage mask_coverage = MaskCoverage::kAnyMask;  // the masks they hold for
  int32_t mask_key_length = 0;                          // its N (MaskCoverage); else 0
  int32_t examples = 0;                                 // calibrate_attention() calls so far
  bool mixed_masks = false;                             // no one coverage holds (above)
};

// real = scale * (q - zero_point).
struct QuantParams {
  float scale = 1.0f;
  int32_t zero_point = 0;
};

// Per-tensor activation quantization chosen by quantize_attention_*: what a
// caller needs to quantize inputs and dequantize outputs.
struct ActivationQuant {
  QuantParams query, key, value, q, k, v, context, output;
};

// Per-output-channel weight scales (views into the storage arena).
struct WeightScales {
  const float* q = nullptr;  // [D]
  const float* k = nullptr;  // [Dkv]
  const float* v = nullptr;  // [Dkv]
  const float* o = nullptr;  // [E]
};

// Arena bytes calibrate_attention() needs for L query rows and S keys:
// Q [L, D], K and V [S, Dkv], context [L, D], output [L, E], one score row [S], f32.
size_t calibrate_attention_arena_bytes(const AttentionConfig& config, int32_t L, int32_t S);

// Run the float32 forward of one calibration example (plan from
// plan_attention(config, DType::kF32, L, S)) and widen *ranges by what every
// stage held; call it once per example on the same *ranges (start from
// CalibrationRanges{}: the ranges always contain 0). io.output may be null;
// io.attn_weights is ignored; io.query_position places the queries of a rotary
// config (keys at 0 .. S-1), as in forward_f32. Scratch comes from `arena` and
// is given back. Errors: those of forward_f32, kBadQuantParams for a
// non-finite value.
Status calibrate_attention(const Plan& plan, const WeightsF32& weights, const Mask& mask, const IoF32& io,
                           Arena& arena, CalibrationRanges* ranges);

// Widen *ranges so that they hold under any mask, not only the one
// calibrate_attention() ran with, for the same example (io.value; plan and
// arena as for calibrate_attention). A block calibrated without a mask but
// run causal, with key padding or a window has rows that attend to one or a
// few keys: their context is (close to) a V row, not an average of many, and
// outside the calibrated range (13-20 dB lost). Afterwards:
//  - context covers V's range: each context row is a convex combination of V
//    rows under every mask (a fully masked row is 0, which every range holds);
//  - output covers bo + Wo [V_j of each head's K/V group] for every key j:
//    the row of every head attending to key j alone (a causal first row, a
//    window of 1, key_length 1).
// The cost: a block that always runs with its calibration mask gets coarser
// context/output grids (s8 loses 0-4 dB on unmasked examples; s16 ~0).
// kBadQuantParams on a non-finite value; kNullArgument, kBadDtype, kPlanMismatch.
Status calibrate_any_mask(const Plan& plan, const WeightsF32& w, const IoF32& io, Arena& arena,
                          CalibrationRanges* ranges);

// int8 asymmetric (kS8: [-128, 127], the range widened to contain 0, zero
// point nudged to an integer) or int16 symmetric (kS16: max |x| / 32767,
// zero point 0) parameters for a range. A degenerate range gets scale 2^-20.
QuantParams choose_activation_quant(Range r, DType dtype);

// q = clamp(round(x / scale) + zero_point) to the dtype's range (round half away from zero).
int32_t quantize_value(float x, QuantParams p, DType dtype);

// Choices of quantize_attention_* beyond the scheme's defaults.
struct QuantizeOptions {
  // One weight scale per projection (max |w| over the whole matrix) instead of
  // one per output channel; stored per channel all the same, so the run time
  // is unchanged. For comparison with per-tensor toolchains: less accurate.
  bool per_tensor_weights = false;
  // Int4 weights for Q, K, V and O (ProjectionS8 / S16::weight_s4, two per
  // byte): each channel's scale chosen by squared error over clip ratios,
  // values in [-8, 7]. Needs even input widths (kBadShape otherwise). The
  // storage stays quantize_attention_storage_bytes() (the packed weights take
  // the first half of the int8 room).
  bool int4_weights = false;
  // Rotary configs: rows of the cos/sin tables (RopeTable::positions), the
  // largest position + 1 the integer forward can run (queries and keys; a
  // decode's cache positions). Costs 2 * max_positions * head_dim bytes.
  int32_t max_positions = 2048;
};

// Bytes quantize_attention_* carve from `storage` for this configuration
// (with rotary embedding, the tables of options.max_positions rows included).
size_t quantize_attention_storage_bytes(const AttentionConfig& config, DType dtype,
                                        const QuantizeOptions& options = QuantizeOptions());

// The converter's rotary tables for `base` and `head_dim` (even): positions
// rows of head_dim / 2 Q1.14 entries, cos[p][i] = round(2^14 cos(p base^(-2i /
// head_dim))) (angles in double, as rope_f32), sin likewise, into `storage`.
// Errors: kBadRope (base not > 0 and finite, odd head_dim), kBadQuantParams
// (positions < 1 or above 2^24, the .attn dim cap), kArenaTooSmall, kNullArgument.
Status rope_table(float base, int32_t head_dim, int32_t positions, Arena& storage, RopeTable* out);

// Quantize a float32 block for forward_s8 / forward_s16: per-channel int8
// weights, biases with the input zero points folded in, every multiplier and
// shift, the fused-softmax constants. Arrays live in `storage` (at least
// quantize_attention_storage_bytes()); *out points into it, rotary tables included
// (options.max_positions rows). `act` and `scales`
// (optional) receive the float scales for I/O and reports. Errors:
// kNullArgument, the plan_attention() config errors, kBadQuantParams (a
// non-finite weight or range, a scale whose multiplier cannot be
// represented, a mask coverage outside MaskCoverage), kBiasOutOfRange (a bias
// beyond the accumulator bound of attn/FORMAT.md: it never writes one the
// loader or the forward rejects), kMaskNotCalibrated (ranges.mixed_masks: no
// one mask coverage holds for them; widen them with calibrate_any_mask()),
// kArenaTooSmall.
Status quantize_attention_s8(const AttentionConfig& config, const WeightsF32& weights,
                             const CalibrationRanges& ranges, Arena& storage, WeightsS8* out,
                             ActivationQuant* act, WeightScales* scales = nullptr,
                             const QuantizeOptions& options = QuantizeOptions());
Status quantize_attention_s16(const AttentionConfig& config, const WeightsF32& weights,
                              const CalibrationRanges& ranges, Arena& storage, WeightsS16* out,
                              ActivationQuant* act, WeightScales* scales = nullptr,
                              const QuantizeOptions& options = QuantizeOptions());

}  // namespace attn
