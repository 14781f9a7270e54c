// transformer_state.cpp: what the decoding states of every dtype share
// (attn/transformer.h). Free of float code.
#include "attn/transformer.h"

namespace attn {

Status transformer_state_reset(TransformerStateF32* state) {
  if (state == nullptr || (state->caches == nullptr && state->num_layers > 0)) return Status::kNullArgument;
  for (int32_t l = 0; l < state->num_layers; ++l) ATTN_TRY(kv_cache_reset(&state->caches[l]));
  state->length = 0;
  return Status::kOk;
}

}  // namespace attn
