// attention/mask.h: which keys each query row sees, and the argument checks
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

// The keys of query row i. For a checked mask (check_mask) and
// 0 <= i, S <= ATTN_MAX_SEQ: int32 arithmetic that cannot overflow (the
// newest visible key i + causal_offset is only formed below end).
inline KeyRange visible_keys(const Mask& mask, int32_t i, int32_t S) {
  int32_t end = mask.key_length == Mask::kAllKeys ? S : mask.key_length;
  int32_t begin = 0;
  if (mask.causal) {
    const int32_t off = mask.causal_offset;    // >= 0: the newest visible key is i + off
    if (off < end - i - 1) end = i + off + 1;  // i + off + 1 < end
    if (mask.window > 0) {
      const int32_t x = off - mask.window + 1;  // >= -INT32_MAX + 1: off >= 0, window >= 1
      if (x >= end - i) {
        begin = end;  // the window starts at or past end
      } else if (i + x > 0) {
        begin = i + x;  // i + off + 1 - window, below end
      }
    }
  }
  return KeyRange{begin, end};
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
