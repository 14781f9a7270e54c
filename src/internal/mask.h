// internal/mask.h: which keys each query row sees, and the argument checks
// every forward shares. Integer-only and header-only, so the fixed-point
// forwards use the same rules without linking any float code.
#pragma once

#include <cstdint>

#include "attn/attention.h"

namespace attn {
namespace detail {

// Keys [begin, end) that query row i may attend before the additive mask.
// Both ends are non-decreasing in i.
struct KeyRange {
  int32_t begin;
  int32_t end;
};

inline KeyRange visible_keys(const Mask& mask, int32_t i, int32_t S) {
  int64_t end = mask.key_length == Mask::kAllKeys ? S : mask.key_length;
  int64_t begin = 0;
  if (mask.causal) {
    const int64_t last = static_cast<int64_t>(i) + mask.causal_offset;  // newest visible key
    if (last + 1 < end) end = last + 1;
    if (mask.window > 0 && last + 1 - mask.window > begin) begin = last + 1 - mask.window;
  }
  if (begin > end) begin = end;
  return KeyRange{static_cast<int32_t>(begin), static_cast<int32_t>(end)};
}

// Argument checks of a Mask for S keys: kBadKeyPadding, kBadCausalOffset,
// kBadWindow, kBadShape (additive stride).
inline Status check_mask(const Mask& mask, int32_t S) {
  if (mask.key_length != Mask::kAllKeys && (mask.key_length < 0 || mask.key_length > S)) {
    return Status::kBadKeyPadding;
  }
  if (mask.causal_offset < 0) return Status::kBadCausalOffset;
  if (mask.window < 0 || (mask.window > 0 && !mask.causal)) return Status::kBadWindow;
  if (mask.additive != nullptr && mask.additive_stride != 0 && mask.additive_stride < S)
    return Status::kBadShape;
  return Status::kOk;
}

// The planner that made a plan: plan_attention (forwards) or plan_decode.
using Planner = Status (*)(const AttentionConfig&, DType, int32_t, int32_t, Plan*, int32_t);

// The plan is for `dtype` and exactly what `make` returns for its config and
// shape (decode: whether make is plan_decode): kBadDtype, kPlanMismatch
// (edited by hand, zero-initialized, or made by the other planner).
inline Status check_plan_made_by(const Plan& plan, DType dtype, bool decode, Planner make) {
  if (plan.dtype != dtype) return Status::kBadDtype;
  Plan fresh;
  if (plan.decode != decode ||
      make(plan.config, plan.dtype, plan.query_len, plan.key_len, &fresh, plan.tile_rows) != Status::kOk ||
      fresh.arena_bytes != plan.arena_bytes || fresh.tile_rows != plan.tile_rows) {
    return Status::kPlanMismatch;
  }
  return Status::kOk;
}

// A forward plan for `dtype`, exactly as plan_attention() makes it.
inline Status check_forward_plan(const Plan& plan, DType dtype) {
  return check_plan_made_by(plan, dtype, false, plan_attention);
}

}  // namespace detail
}  // namespace attn
