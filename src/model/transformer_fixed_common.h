// model/transformer_fixed_common.h: what the integer model forwards
// (model/transformer_fixed.cpp) and their converter
// (quant/quantize_transformer.cpp) share: the model config's checks
// (model/transformer_plan.h, every dtype's), the arena of a plan, and the
// forward with a per-stage observer (the converter's report).
#pragma once

#include <cstdint>
#include <cstring>

#include "attn/transformer.h"
#include "attn/transformer_fixed.h"
#include "model/transformer_plan.h"

namespace attn {
namespace detail {

// Called after each stage of an integer forward with the int32 residual
// rows [n, E] (stage 0: after the embeddings; stage 2 l + 1: after layer l's
// attention, 2 l + 2: after its FFN, each with its post-norm).
struct ForwardObserver {
  void (*fn)(void* context, int32_t stage, const int32_t* residual, int32_t n, int32_t E) = nullptr;
  void* context = nullptr;
};

Status transformer_forward_observed(const TransformerPlan& plan, const TransformerWeightsS8& w,
                                    const int32_t* tokens, int32_t n, OutputRows rows, int32_t* out,
                                    Arena& arena, const ForwardObserver& observer);
Status transformer_forward_observed(const TransformerPlan& plan, const TransformerWeightsS16& w,
                                    const int32_t* tokens, int32_t n, OutputRows rows, int32_t* out,
                                    Arena& arena, const ForwardObserver& observer);

}  // namespace detail
}  // namespace attn
