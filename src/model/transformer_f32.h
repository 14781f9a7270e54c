// model/transformer_f32.h: what the f32 whole-model forward, decode and
// packing share (attn/transformer.h): the weight checks (the plan's are
// model/transformer_plan.h's), and where pack_transformer_weights_f32()
// puts each layer's panels.
#pragma once

#include <cstdint>

#include "attention/packed_f32.h"
#include "attn/transformer.h"
#include "model/transformer_plan.h"

namespace attn {
namespace detail {

// Every pointer of one layer the config needs (kNullArgument). transformer_f32.cpp.
Status check_layer_weights_f32(const TransformerConfig& c, const LayerWeightsF32& lw);

// Float offsets of one layer's panels in the packing buffer, each part
// rounded up to ATTN_ARENA_ALIGN bytes: the attention's four (as
// pack_weights_f32 lays them out), then W1, W3 (gated) and W2. All 0 where
// this build packs nothing.
struct PackedLayerF32 {
  uint64_t attention, w1, w3, w2, total;  // in floats
};

inline PackedLayerF32 packed_layer_f32(const TransformerConfig& c) {
  constexpr uint64_t kAlignFloats = ATTN_ARENA_ALIGN / sizeof(float);
  const auto part = [](uint64_t floats) -> uint64_t {
    return (floats + kAlignFloats - 1) / kAlignFloats * kAlignFloats;
  };
  AttentionConfig a = c.attention();
  a.head_dim = a.resolved_head_dim(), a.kdim = a.resolved_kdim(), a.vdim = a.resolved_vdim();
  a.num_kv_heads = a.resolved_kv_heads();
  PackedLayerF32 p{};
  p.attention = 0;
  p.w1 = p.attention + packed_layout_f32(a).total;                       // attention panels
  p.w3 = p.w1 + part(linear_panels_floats_f32(c.ffn_dim, c.embed_dim));  // W1^T [F/16, E, 16]
  p.w2 = p.w3 + (c.gated_ffn ? part(linear_panels_floats_f32(c.ffn_dim, c.embed_dim)) : 0);  // W3^T
  p.total = p.w2 + part(linear_panels_floats_f32(c.embed_dim, c.ffn_dim));  // W2^T [E/16, F, 16]
  return p;
}

// W1, W3 and W2 panels of ffn.packed (nulls without: read as stored).
struct FfnPanelsF32 {
  const float* w1;
  const float* w3;
  const float* w2;
};

inline FfnPanelsF32 ffn_panels_f32(const TransformerConfig& c, const FfnWeightsF32& f) {
  if (f.packed == nullptr) return FfnPanelsF32{nullptr, nullptr, nullptr};
  const PackedLayerF32 p = packed_layer_f32(c);
  // ffn.packed points at the layer's W1 panels.
  return FfnPanelsF32{f.packed, c.gated_ffn ? f.packed + (p.w3 - p.w1) : nullptr, f.packed + (p.w2 - p.w1)};
}

}  // namespace detail
}  // namespace attn
