// model/transformer_plan.h: the whole-model checks every dtype's runtime
// shares, made once in model/transformer_plan.cpp (integer-only).
#pragma once

#include "attn/transformer.h"

namespace attn {
namespace detail {

// The model fields beyond the block, integer-only (eps through its bits):
// kBadNumLayers, kBadVocab, kBadFfnDim, kBadMaxPositions, kBadNorm,
// kBadActivation, kBadHead, then plan_attention's statuses for the block.
Status check_model_config(const TransformerConfig& c);

// The plan is one plan_transformer() makes for its own fields, of `dtype`:
// kBadDtype, kPlanMismatch.
Status check_transformer_plan(const TransformerPlan& plan, DType dtype);

}  // namespace detail
}  // namespace attn
