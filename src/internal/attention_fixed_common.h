// internal/attention_fixed_common.h: argument checks and mask helpers shared
// by forward_s8 and forward_s16 (same rules as forward_f32).
#pragma once

#include <cstdint>

#include "attn/attention.h"
#include "attn/attention_fixed.h"
#include "internal/mask.h"

namespace attn {
namespace detail {

// The plan is for `dtype` and is exactly what plan_attention() returns; the
// mask is valid and has no additive part (kUnsupportedMask).
inline Status check_plan_and_mask(const Plan& plan, DType dtype, const Mask& mask) {
  ATTN_TRY(check_forward_plan(plan, dtype));
  ATTN_TRY(check_mask(mask, plan.key_len));
  return mask.additive != nullptr ? Status::kUnsupportedMask : Status::kOk;
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
  if (sm.exp_multiplier < 0x80000000u || sm.exp_shift < 0 || sm.exp_shift > 31 || sm.diff_limit < 0 ||
      static_cast<uint32_t>(sm.diff_limit) > (0xFFFFFFFFu >> sm.exp_shift) || sm.score_shift < 0 ||
      sm.score_shift > 40) {
    return Status::kBadQuantParams;
  }
  return Status::kOk;
}

}  // namespace detail
}  // namespace attn
