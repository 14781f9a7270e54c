// transformer_plan.cpp: validate a whole-model config once and size the
// arena of one call and of the decoding state (attn/transformer.h).
//
// Integer-only (eps is checked through its bits, as plan.cpp checks
// rope_base), so integer-only firmware links it without float code. The
// sizes are the constant expressions of attn/transformer.h (f32) and
// attn/transformer_fixed.h (s8, s16), which firmware can use at compile time.
#include <cstdint>
#include <cstring>

#include "attn/transformer.h"
#include "attn/transformer_fixed.h"
#include "kernels/arch.h"
#include "model/transformer_plan.h"

namespace attn {
namespace {

// 0 < eps < 1, finite: positive floats order like their bit patterns.
bool norm_eps_ok(float eps) {
  uint32_t b = 0;
  std::memcpy(&b, &eps, sizeof b);
  return b != 0 && b < 0x3F800000u;  // 0x3F800000 = bits of 1.0f; sign, inf and NaN exceed it
}

// The model fields besides the attention block.
ATTN_COLD_CODE Status check_model_fields(const TransformerConfig& c) {
  if (c.num_layers <= 0 || c.num_layers > ATTN_MAX_LAYERS) return Status::kBadNumLayers;
  if (c.vocab_size <= 0 || c.vocab_size > (1 << 24)) return Status::kBadVocab;
  if (c.type_vocab_size < 0 || c.type_vocab_size > (1 << 16)) return Status::kBadVocab;
  if (c.ffn_dim <= 0 || c.ffn_dim > ATTN_MAX_DIM) return Status::kBadFfnDim;
  if (c.max_positions <= 0 || c.max_positions > ATTN_MAX_SEQ) return Status::kBadMaxPositions;
  if (c.norm != NormKind::kLayerNorm && c.norm != NormKind::kRmsNorm) return Status::kBadNorm;
  if (!norm_eps_ok(c.norm_eps)) return Status::kBadNorm;
  switch (c.activation) {
    case Activation::kGelu:
    case Activation::kGeluTanh:
    case Activation::kRelu:
    case Activation::kSilu:
      break;
    default:
      return Status::kBadActivation;
  }
  if (c.head != LmHead::kNone && c.head != LmHead::kTied && c.head != LmHead::kUntied)
    return Status::kBadHead;
  return Status::kOk;
}

// Arena and state bytes of a validated plan for its dtype (0: overflow;
// the state's also 0 without capacity).
// kBadDtype where this build has no whole-model runtime for the dtype.
Status transformer_sizes(const TransformerPlan& p, size_t* arena, size_t* state) {
  *arena = 0;
  *state = 0;
  switch (p.dtype) {
#if ATTN_WITH_F32
    case DType::kF32:
      *arena = transformer_arena_bytes(p.config, p.dtype, p.max_tokens, p.capacity, p.tile_rows);
      *state = transformer_state_bytes(p.config, p.dtype, p.capacity);
      return Status::kOk;
#endif
#if ATTN_WITH_S8
    case DType::kS8:
#endif
#if ATTN_WITH_S16
    case DType::kS16:
#endif
#if ATTN_WITH_S8 || ATTN_WITH_S16
      *arena = transformer_fixed_arena_bytes(p.config, p.dtype, p.max_tokens, p.capacity, p.tile_rows);
      *state = transformer_fixed_state_bytes(p.config, p.dtype, p.capacity);
      return Status::kOk;
#endif
    default:
      return Status::kBadDtype;
  }
}

}  // namespace

namespace detail {

ATTN_COLD_CODE Status check_model_config(const TransformerConfig& c) {
  ATTN_TRY(check_model_fields(c));
  Plan p;
  return plan_attention(c.attention(), DType::kF32, 1, 1, &p);
}

Status check_transformer_plan(const TransformerPlan& plan, DType dtype) {
  if (plan.dtype != dtype) return Status::kBadDtype;
  TransformerPlan fresh;
  if (plan_transformer(plan.config, plan.dtype, plan.max_tokens, plan.capacity, &fresh, plan.tile_rows) !=
          Status::kOk ||
      fresh.arena_bytes != plan.arena_bytes || fresh.state_bytes != plan.state_bytes ||
      fresh.tile_rows != plan.tile_rows) {
    return Status::kPlanMismatch;
  }
  return Status::kOk;
}

}  // namespace detail

ATTN_COLD_CODE Status plan_transformer(const TransformerConfig& config, DType dtype, int32_t max_tokens,
                                       int32_t capacity, TransformerPlan* out, int32_t tile_rows) {
  if (out == nullptr) return Status::kNullArgument;
  *out = TransformerPlan();
  ATTN_TRY(check_model_fields(config));
  // The attention block as one call runs it: max_tokens queries over as many
  // keys, in the plan's dtype (kBadDtype for one this build leaves out).
  Plan block;
  ATTN_TRY(plan_attention(config.attention(), dtype, max_tokens, max_tokens, &block, tile_rows));
  if (max_tokens > config.max_positions) return Status::kSequenceTooLong;
  if (capacity < 0 || capacity > ATTN_MAX_SEQ) return Status::kBadKeyLength;
  if (capacity > 0 && !config.causal) return Status::kNotCausal;
  if (capacity > config.max_positions) return Status::kCapacityPastPositions;

  TransformerPlan p;
  p.config = config;
  p.dtype = dtype;
  p.max_tokens = max_tokens;
  p.capacity = capacity;
  p.tile_rows = block.tile_rows;  // min(tile_rows, max_tokens)
  size_t arena = 0, state = 0;
  ATTN_TRY(transformer_sizes(p, &arena, &state));
  if (arena == 0 || (capacity > 0 && state == 0)) return Status::kSizeOverflow;
  p.arena_bytes = arena;
  p.state_bytes = state;
  *out = p;
  return Status::kOk;
}

}  // namespace attn
