// transformer_pack_f32.cpp: W^T panels of every layer's attention and FFN,
// made once per model for the kernels that multiply by them
// (model/transformer_f32.h has the layout).
#include <cstdint>

#include "attn/transformer.h"
#include "kernels/kernel_table.h"
#include "model/transformer_f32.h"

namespace attn {
namespace {

Status bytes_of(const TransformerConfig& c, size_t* bytes) {
  const uint64_t per_layer = detail::packed_layer_f32(c).total;
  const uint64_t layers = static_cast<uint64_t>(c.num_layers);
  if (per_layer > SIZE_MAX / sizeof(float) / layers) return Status::kSizeOverflow;
  *bytes = static_cast<size_t>(per_layer * layers) * sizeof(float);
  return Status::kOk;
}

}  // namespace

Status pack_transformer_weights_f32_storage_bytes(const TransformerPlan& plan, size_t* bytes) {
  if (bytes == nullptr) return Status::kNullArgument;
  ATTN_TRY(detail::check_transformer_plan(plan, DType::kF32));
  return bytes_of(plan.config, bytes);
}

Status pack_transformer_weights_f32(const TransformerPlan& plan, LayerWeightsF32* layers, void* buffer,
                                    size_t bytes) {
  if (layers == nullptr) return Status::kNullArgument;
  ATTN_TRY(detail::check_transformer_plan(plan, DType::kF32));
  const TransformerConfig& c = plan.config;
  for (int32_t l = 0; l < c.num_layers; ++l) ATTN_TRY(detail::check_layer_weights_f32(c, layers[l]));
  size_t need = 0;
  ATTN_TRY(bytes_of(c, &need));
  if (need == 0) {  // this build reads W as stored
    for (int32_t l = 0; l < c.num_layers; ++l) layers[l].attention.packed = layers[l].ffn.packed = nullptr;
    return Status::kOk;
  }
  if (buffer == nullptr) return Status::kNullArgument;
  if (reinterpret_cast<uintptr_t>(buffer) % ATTN_ARENA_ALIGN != 0) return Status::kArenaMisaligned;
  if (bytes < need) return Status::kBufferTooSmall;
  // The attention's panels through pack_weights_f32, with a plan of its config.
  Plan block;
  ATTN_TRY(plan_attention(c.attention(), DType::kF32, 1, 1, &block));
  const detail::PackedLayerF32 p = detail::packed_layer_f32(c);
  const detail::PackedLinearF32 pk = detail::best(detail::kPackedLinearF32);
  const int32_t E = c.embed_dim, F = c.ffn_dim;
  for (int32_t l = 0; l < c.num_layers; ++l) {
    LayerWeightsF32& lw = layers[l];
    float* const base = static_cast<float*>(buffer) + static_cast<ptrdiff_t>(p.total) * l;  // [p.total]
    ATTN_TRY(pack_weights_f32(block, lw.attention, base + p.attention,
                              static_cast<size_t>(p.w1 - p.attention) * sizeof(float), &lw.attention));
    pk.pack(matrix(lw.ffn.w1, F, E), base + p.w1);
    if (c.gated_ffn) pk.pack(matrix(lw.ffn.w3, F, E), base + p.w3);
    pk.pack(matrix(lw.ffn.w2, E, F), base + p.w2);
    lw.ffn.packed = base + p.w1;
  }
  return Status::kOk;
}

}  // namespace attn
