// core/mask_coverage.h: which (coverage, keys) pairs describe masks
// (attn::MaskCoverage), shared by the loader (quant params 14 and 15) and the
// integer forwards (hand-made weights).
#pragma once

#include <cstdint>

#include "attn/attention_fixed.h"
#include "attn/config.h"
#include "attn/status.h"

namespace attn {
namespace detail {

// kOk for a MaskCoverage value with its N: kKeyLength and kCausalKeyLength
// keep 0..ATTN_MAX_SEQ keys, kCausal from causal_offset 0..ATTN_MAX_SEQ,
// kCausalWindow a window of 1..ATTN_MAX_SEQ; the others carry 0. kBadReserved for a key count beside a
// coverage that has none, kBadQuantParams for anything else out of range.
inline Status mask_coverage_status(int32_t coverage, int32_t keys) {
  switch (static_cast<MaskCoverage>(coverage)) {
    case MaskCoverage::kAnyMask:
    case MaskCoverage::kNoMask:
      return keys == 0 ? Status::kOk : Status::kBadReserved;
    case MaskCoverage::kCausal:
    case MaskCoverage::kKeyLength:
    case MaskCoverage::kCausalKeyLength:
      return keys >= 0 && keys <= ATTN_MAX_SEQ ? Status::kOk : Status::kBadQuantParams;
    case MaskCoverage::kCausalWindow:
      return keys >= 1 && keys <= ATTN_MAX_SEQ ? Status::kOk : Status::kBadQuantParams;
  }
  return Status::kBadQuantParams;
}

}  // namespace detail
}  // namespace attn
