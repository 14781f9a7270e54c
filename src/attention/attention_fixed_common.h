// attention/attention_fixed_common.h: argument checks and helpers shared by
// forward_s8 and forward_s16 (same rules as forward_f32), and by any other
// integer path over the same weights (a KV-cache decode): the K/V head of a
// query head, the rotary checks. Rotating rows is detail::rope_s8 / rope_s16
// (kernels/kernels_fixed.h).
#pragma once

#include <cstdint>
#include <cstring>

#include "attention/mask.h"
#include "attn/attention.h"
#include "attn/attention_fixed.h"
#include "core/bias_bound.h"  // bias_in_range
#include "core/mask_coverage.h"
#include "kernels/arch.h"  // ATTN_NOINLINE

namespace attn {
namespace detail {

// A projection's weights: int8 (weight), or int4 (weight_s4, which needs an
// even input width: two values per byte). kNullArgument without either.
template <class Projection>
inline Status check_projection_weights(const Projection& p, int32_t in) {
  if (p.weight_s4 != nullptr) return in % 2 == 0 ? Status::kOk : Status::kBadShape;
  return p.weight != nullptr ? Status::kOk : Status::kNullArgument;
}

// The plan is for `dtype` and is exactly what plan_attention() returns; the
// mask is valid and has no additive part (kUnsupportedMask).
inline Status check_plan_and_mask(const Plan& plan, DType dtype, const Mask& mask) {
  ATTN_TRY(check_forward_plan(plan, dtype));
  ATTN_TRY(check_mask(mask, plan.key_len));
  return mask.additive != nullptr ? Status::kUnsupportedMask : Status::kOk;
}

// The mask coverage of s8/s16 weights is one of MaskCoverage's values with
// its key count (core/mask_coverage.h): kBadQuantParams if not.
inline Status check_mask_coverage(MaskCoverage coverage, int32_t keys) {
  return mask_coverage_status(static_cast<int32_t>(coverage), keys) == Status::kOk ? Status::kOk
                                                                                   : Status::kBadQuantParams;
}

// Whether ranges calibrated for `coverage` (with its key count or window N)
// hold under `mask` (a checked mask over S keys; attn/attention_fixed.h,
// MaskCoverage): kMaskNotCalibrated if not. A row that sees more keys than
// in calibration is covered: kCausal holds from its calibration's
// causal_offset N up, the other causal kinds (calibrated at offset 0) at any.
inline Status check_mask_covered(MaskCoverage coverage, int32_t n, const Mask& mask, int32_t S) {
  const int32_t kept = mask.key_length == Mask::kAllKeys ? S : mask.key_length;
  bool covered = true;
  switch (coverage) {
    case MaskCoverage::kAnyMask:
      break;
    case MaskCoverage::kNoMask:
      covered = !mask.causal && kept == S;
      break;
    case MaskCoverage::kCausal:  // a window or key padding leaves rows fewer keys: they clip (19.6 dB)
      covered = mask.causal && mask.window == 0 && kept == S && mask.causal_offset >= n;
      break;
    case MaskCoverage::kKeyLength:
      covered = !mask.causal && kept == n;
      break;
    case MaskCoverage::kCausalWindow:
      covered = mask.causal && mask.window == n && kept == S;
      break;
    case MaskCoverage::kCausalKeyLength:
      covered = mask.causal && mask.window == 0 && kept == n;
      break;
  }
  return covered ? Status::kOk : Status::kMaskNotCalibrated;
}

// Query head h reads K/V head kv_head(c, h): grouped-query attention shares one
// K/V head among num_heads / num_kv_heads consecutive query heads. `c` is a
// plan's config (num_kv_heads resolved, never 0). Its columns of K and V are
// [kv_head * head_dim, (kv_head + 1) * head_dim).
inline int32_t kv_head(const AttentionConfig& c, int32_t h) { return h / (c.num_heads / c.num_kv_heads); }

// Whether the config has rotary embedding, from the bits of rope_base (+0 and
// -0 are off): no float instruction, so integer-only firmware links it.
inline bool rope_enabled(const AttentionConfig& c) {
  uint32_t bits = 0;
  std::memcpy(&bits, &c.rope_base, sizeof bits);
  return (bits & 0x7FFFFFFFu) != 0;
}

// A rope table the kernels can read: both pointers set (kNullArgument), at
// least one position (kBadQuantParams).
inline Status check_rope_table(const RopeTable& t) {
  if (t.cos == nullptr || t.sin == nullptr) return Status::kNullArgument;
  return t.positions < 1 ? Status::kBadQuantParams : Status::kOk;
}

// Positions [first, first + count) all have a table row: kBadPosition (first
// < 0), kRopePositionOutOfRange (first + count > t.positions).
inline Status check_rope_positions(const RopeTable& t, int64_t first, int64_t count) {
  if (first < 0) return Status::kBadPosition;
  return first + count > t.positions ? Status::kRopePositionOutOfRange : Status::kOk;
}

// The rotary arguments of one forward: nothing without rope; else the table,
// the query rows at query_position .. + L - 1 and the keys at 0 .. S - 1.
inline Status check_forward_rope(const Plan& plan, const RopeTable& t, int32_t query_position) {
  if (!rope_enabled(plan.config)) return Status::kOk;
  ATTN_TRY(check_rope_table(t));
  ATTN_TRY(check_rope_positions(t, query_position, plan.query_len));
  return check_rope_positions(t, 0, plan.key_len);
}

inline bool shift_ok(int32_t s, int32_t max) { return (s >= -31) & (s <= max); }

// Per-channel multipliers >= 0 and shifts in [-31, max_shift]; with `bias`
// (null: none) each bias within the bound for `in` inputs (kBiasOutOfRange).
// Every forward runs this over all four projections' channels, so the loops
// are branch-free counts that GCC vectorizes (a bool &= reduction it leaves
// scalar), and out of line, keeping the unit's optimization: inlined into
// the -Os checks (ATTN_COLD_CODE) they stayed scalar, 7% of an s8 forward at
// L = 16.
template <typename B>
ATTN_NOINLINE Status check_requant(const int32_t* mult, const int32_t* shift, int32_t n, int32_t max_shift,
                                   const B* bias, int32_t in) {
  if (mult == nullptr || shift == nullptr) return Status::kNullArgument;
  int32_t params_ok = 0;  // channels whose multiplier and shift are in range
  for (int32_t i = 0; i < n; ++i) params_ok += (mult[i] >= 0) & shift_ok(shift[i], max_shift);
  if (params_ok != n) return Status::kBadQuantParams;
  if (bias == nullptr) return Status::kOk;
  int32_t bias_ok = 0;  // channels whose bias is in range
  for (int32_t i = 0; i < n; ++i) bias_ok += bias_in_range(bias[i], in);
  return bias_ok == n ? Status::kOk : Status::kBiasOutOfRange;
}

inline Status check_softmax(const FusedSoftmaxParams& sm) {
  if (sm.exp_multiplier < 0x80000000u || sm.exp_shift < 0 || sm.exp_shift > 31 || sm.diff_limit < 0 ||
      static_cast<uint32_t>(sm.diff_limit) > (0xFFFFFFFFu >> sm.exp_shift) || sm.score_shift < 0 ||
      sm.score_shift > 40) {
    return Status::kBadQuantParams;
  }
  return Status::kOk;
}

}  // namespace detail
}  // namespace attn
