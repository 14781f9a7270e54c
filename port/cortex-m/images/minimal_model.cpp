// minimal_model.cpp: the s8 whole-model runtime linked into a minimal image
// (attn_minimal_model_s8): plan_transformer_fixed, transformer_forward_s8,
// transformer_state_init_s8 and transformer_decode_s8 on a tiny causal
// model with random weights (cost/model_s8.h), no stdio. Its flash minus
// attn_empty's is the flash cost of the model runtime (the attention block,
// norms, activations, FFN, head, planner and checks) for tools/bench/mcu-cost.
// Exits with the first failing Status code (0 = kOk).
#include <cstdint>

#include "../cost/model_s8.h"

namespace {

using namespace attn;

// A decoder with biases and without rotary embedding.
TransformerConfig make_config() {
  TransformerConfig c = TransformerConfig::decoder(/*vocab_size=*/16, /*embed_dim=*/8, /*num_layers=*/1,
                                                   /*num_heads=*/2, /*ffn_dim=*/16, /*max_positions=*/4);
  c.rope_base = 0.0f;
  c.attention_bias = c.ffn_bias = c.norm_bias = true;
  return c;
}

alignas(ATTN_ARENA_ALIGN) uint8_t g_pool[4096];
alignas(ATTN_ARENA_ALIGN) uint8_t g_arena[8192];
LayerWeightsS8 g_layers[1];
int32_t g_tokens[4] = {1, 5, 9, 3};
int32_t g_out[4 * 16];

}  // namespace

int main() {
  const TransformerConfig c = make_config();
  Arena pool;
  Status s = pool.init(g_pool, sizeof g_pool);
  if (s != Status::kOk) return static_cast<int>(s);
  model_s8::Builder b(pool, 1u);
  const TransformerWeightsS8 w = b.build(c, g_layers);
  if (b.status() != Status::kOk) return static_cast<int>(b.status());
  TransformerPlan plan;
  s = plan_transformer_fixed(c, DType::kS8, 4, 4, &plan);
  if (s != Status::kOk) return static_cast<int>(s);
  Arena arena;
  s = arena.init(g_arena, sizeof g_arena);
  if (s != Status::kOk) return static_cast<int>(s);
  s = transformer_forward_s8(plan, w, g_tokens, 4, OutputRows::kAll, g_out, arena);
  if (s != Status::kOk) return static_cast<int>(s);
  TransformerStateS8 state;
  s = transformer_state_init_s8(plan, 0, arena, &state);
  if (s != Status::kOk) return static_cast<int>(s);
  return static_cast<int>(
      transformer_decode_s8(plan, w, &state, g_tokens, 4, OutputRows::kLast, g_out, arena));
}
