// internal/attention_fixed_common.h: argument checks and mask helpers shared
// by forward_s8 and forward_s16 (same rules as forward_f32).
#pragma once

#include <cstdint>

#include "attn/attention.h"
#include "attn/attention_fixed.h"

namespace attn {
namespace detail {

// Keys [begin, end) query row i may attend; both ends non-decreasing in i.
// The rule of detail::visible_keys() in attend_f32.cpp, kept here as well so
// the integer forwards do not pull in a float translation unit.
struct KeyRangeFixed {
  int32_t begin;
  int32_t end;
};
inline KeyRangeFixed visible_keys_fixed(const Mask& mask, int32_t i, int32_t S) {
  int64_t end = mask.key_length == Mask::kAllKeys ? S : mask.key_length;
  int64_t begin = 0;
  if (mask.causal) {
    const int64_t last = static_cast<int64_t>(i) + mask.causal_offset;  // newest visible key
    if (last + 1 < end) end = last + 1;
    if (mask.window > 0 && last + 1 - mask.window > begin) begin = last + 1 - mask.window;
  }
  if (begin > end) begin = end;
  return KeyRangeFixed{static_cast<int32_t>(begin), static_cast<int32_t>(end)};
}

// The plan is for `dtype` and is exactly what plan_attention() returns; the
// mask is valid and has no additive part.
inline Status check_plan_and_mask(const Plan& plan, DType dtype, const Mask& mask) {
  if (plan.dtype != dtype) return Status::kBadDtype;
  Plan fresh;
  if (plan.decode ||
      plan_attention(plan.config, plan.dtype, plan.query_len, plan.key_len, &fresh, plan.tile_rows) !=
          Status::kOk ||
      fresh.arena_bytes != plan.arena_bytes || fresh.tile_rows != plan.tile_rows) {
    return Status::kPlanMismatch;
  }
  if (mask.key_length != Mask::kAllKeys && (mask.key_length < 0 || mask.key_length > plan.key_len)) {
    return Status::kBadKeyPadding;
  }
  if (mask.causal_offset < 0) return Status::kBadCausalOffset;
  if (mask.window < 0 || (mask.window > 0 && !mask.causal)) return Status::kBadWindow;
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
  if (sm.exp_multiplier < 0x80000000u || sm.exp_shift < 0 || sm.exp_shift > 31 || sm.diff_limit < 0 ||
      static_cast<uint32_t>(sm.diff_limit) > (0xFFFFFFFFu >> sm.exp_shift) || sm.score_shift < 0 ||
      sm.score_shift > 40) {
    return Status::kBadQuantParams;
  }
  return Status::kOk;
}

}  // namespace detail
}  // namespace attn
