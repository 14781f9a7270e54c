// attention/attend_f32.h: the query-tile loop shared by forward_f32 and
// decode_f32: attends L query rows to K and V that are already projected
// (and rotated). No checks: callers validate first.
#pragma once

#include <cstdint>

#include "attention/mask.h"
#include "attention/tile_scratch.h"
#include "attn/attention.h"

namespace attn {
namespace detail {

// The weight pointers a forward, a decode step and packing need: the four
// matrices, and the four biases when c.bias. kNullArgument otherwise.
inline Status check_weights_f32(const AttentionConfig& c, const WeightsF32& w) {
  if (w.wq == nullptr || w.wk == nullptr || w.wv == nullptr || w.wo == nullptr) return Status::kNullArgument;
  if (c.bias && (w.bq == nullptr || w.bk == nullptr || w.bv == nullptr || w.bo == nullptr)) {
    return Status::kNullArgument;
  }
  return Status::kOk;
}

using AttendScratchF32 = TileScratch<float, float>;

// output [L, E] = attention of query [L, E] (row i at rotary position
// q_pos + i) over K, V [S, Dkv]; c is a resolved config (Plan::config);
// the projections split over par (Plan::parallel).
void attend_f32(const AttentionConfig& c, const ParallelFor& par, int32_t tile_rows, const WeightsF32& w,
                const Mask& mask, const float* query, int32_t L, int32_t q_pos, ConstMatF32 K, ConstMatF32 V,
                float* output, float* attn_weights, const AttendScratchF32& scratch);

}  // namespace detail
}  // namespace attn
