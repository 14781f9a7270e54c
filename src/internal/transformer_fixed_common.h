// internal/transformer_fixed_common.h: what the integer model forwards
// (runtime/transformer_fixed.cpp) and their converter
// (quant/quantize_transformer.cpp) share: the block config of a model, the
// model config's checks, and the forward with a per-stage observer (the
// converter's report).
#pragma once

#include <cstdint>
#include <cstring>

#include "attn/transformer.h"
#include "attn/transformer_fixed.h"

namespace attn {
namespace detail {

// The attention block of every layer (TransformerConfig::attention(), here
// so that the integer path links without the f32 runtime).
inline AttentionConfig model_attention_config(const TransformerConfig& c) {
  AttentionConfig a;
  a.embed_dim = c.embed_dim;
  a.num_heads = c.num_heads;
  a.head_dim = c.head_dim;
  a.kdim = 0;
  a.vdim = 0;
  a.bias = c.attention_bias;
  a.num_kv_heads = c.num_kv_heads;
  a.rope_base = c.rope_base;
  return a;
}

// The model fields beyond the block, integer-only (eps through its bits):
// kBadNumLayers, kBadFfnDim, kBadVocab, kBadMaxPositions, kBadNorm,
// kBadActivation, kBadHead, then plan_attention's statuses.
Status check_model_config(const TransformerConfig& c);

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
