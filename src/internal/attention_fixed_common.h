// internal/attention_fixed_common.h: argument checks and mask helpers shared
// by forward_s8 and forward_s16 (same rules as forward_f32).
#pragma once

#include <cstdint>

#include "attn/attention.h"
#include "attn/attention_fixed.h"

namespace attn {
namespace detail {

// Number of keys query row i may attend: keys [0, n) take part. Non-decreasing in i.
inline int32_t visible_keys_fixed(const Mask& mask, int32_t i, int32_t S) {
  int32_t n = mask.key_length == Mask::kAllKeys ? S : mask.key_length;
  if (mask.causal) {
    const int64_t last = static_cast<int64_t>(i) + mask.causal_offset + 1;
    if (last < n) n = static_cast<int32_t>(last);
  }
  return n;
}

// The plan is for `dtype` and is exactly what plan_attention() returns; the
// mask is valid and has no additive part.
inline Status check_plan_and_mask(const Plan& plan, DType dtype, const Mask& mask) {
  if (plan.dtype != dtype) return Status::kBadDtype;
  Plan fresh;
  if (plan_attention(plan.config, plan.dtype, plan.query_len, plan.key_len, &fresh, plan.tile_rows) !=
          Status::kOk ||
      fresh.arena_bytes != plan.arena_bytes || fresh.tile_rows != plan.tile_rows) {
    return Status::kPlanMismatch;
  }
  if (mask.key_length != Mask::kAllKeys && (mask.key_length < 0 || mask.key_length > plan.key_len)) {
    return Status::kBadKeyPadding;
  }
  if (mask.causal_offset < 0) return Status::kBadCausalOffset;
  if (mask.additive != nullptr) return Status::kUnsupportedMask;
  return Status::kOk;
}

inline bool shift_ok(int32_t s, int32_t max) { return s >= -31 && s <= max; }

// Per-channel multipliers >= 0 and shifts in [-31, max_shift].
inline Status check_requant(const int32_t* mult, const int32_t* shift, int32_t n, int32_t max_shift) {
  if (mult == nullptr || shift == nullptr) return Status::kNullArgument;
  for (int32_t i = 0; i < n; ++i) {
    if (mult[i] < 0 || !shift_ok(shift[i], max_shift)) return Status::kBadQuantParams;
  }
  return Status::kOk;
}

inline Status check_softmax(const FusedSoftmaxParams& sm) {
  if (sm.exp_multiplier <= 0 || !shift_ok(sm.exp_shift, 30) || sm.diff_limit < 0 || sm.score_shift < 0 ||
      sm.score_shift > 62) {
    return Status::kBadQuantParams;
  }
  return Status::kOk;
}

}  // namespace detail
}  // namespace attn
