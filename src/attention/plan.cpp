// plan.cpp: validate a configuration and shape once, and size the arena.
#include <cstdint>
#include <cstring>

#include "attn/attention.h"
#include "kernels/arch.h"

namespace attn {
namespace {

bool dim_ok(int32_t v) { return v > 0 && v <= ATTN_MAX_DIM; }
bool optional_dim_ok(int32_t v) { return v == 0 || dim_ok(v); }
bool seq_ok(int32_t v) { return v > 0 && v <= ATTN_MAX_SEQ; }

// rope_base is checked through its bits, so the planner has no float
// instruction or soft-float call: integer-only (s8) firmware links it on
// cores without an FPU (tests/cmake/check_no_float.cmake).
uint32_t float_bits(float f) {
  uint32_t u = 0;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
bool rope_on(float base) { return (float_bits(base) & 0x7FFFFFFFu) != 0; }  // +0 and -0 are off
// 0 < base <= 1e30: positive finite floats order like their bit patterns.
bool rope_base_ok(float base) {
  const uint32_t b = float_bits(base);
  return b != 0 && b <= 0x7149F2CAu;  // 0x7149F2CA = bits of 1e30f; sign, inf and NaN exceed it
}

}  // namespace

ATTN_COLD_FLAT Status plan_attention(const AttentionConfig& config, DType dtype, int32_t L, int32_t S,
                                     Plan* out, int32_t tile_rows) {
  if (out == nullptr) return Status::kNullArgument;
  *out = Plan();
  if (!dim_ok(config.embed_dim)) return Status::kBadEmbedDim;
  if (config.num_heads <= 0 || config.num_heads > ATTN_MAX_HEADS) return Status::kBadNumHeads;
  if (!optional_dim_ok(config.head_dim)) return Status::kBadHeadDim;
  if (config.head_dim == 0 && config.embed_dim % config.num_heads != 0) return Status::kBadHeadDim;
  if (!optional_dim_ok(config.kdim)) return Status::kBadKeyDim;
  if (!optional_dim_ok(config.vdim)) return Status::kBadValueDim;
  if (config.num_kv_heads < 0 || config.num_kv_heads > config.num_heads ||
      (config.num_kv_heads != 0 && config.num_heads % config.num_kv_heads != 0)) {
    return Status::kBadKvHeads;
  }
  if (rope_on(config.rope_base) && (!rope_base_ok(config.rope_base) || config.resolved_head_dim() % 2 != 0)) {
    return Status::kBadRope;
  }
  if (!seq_ok(L)) return Status::kBadQueryLength;
  if (!seq_ok(S)) return Status::kBadKeyLength;
  if (tile_rows <= 0) return Status::kBadTileRows;

  // The dtypes with a forward.
  if (dtype != DType::kF32 && dtype != DType::kS8 && dtype != DType::kS16) return Status::kBadDtype;

  // All shapes are valid here, so 0 means the sum does not fit in size_t.
  const size_t bytes = attention_arena_bytes(config, dtype, L, S, tile_rows);
  if (bytes == 0) return Status::kSizeOverflow;

  out->config = config;
  out->config.head_dim = config.resolved_head_dim();
  out->config.kdim = config.resolved_kdim();
  out->config.vdim = config.resolved_vdim();
  out->config.num_kv_heads = config.resolved_kv_heads();
  out->dtype = dtype;
  out->query_len = L;
  out->key_len = S;
  out->tile_rows = tile_rows < L ? tile_rows : L;
  out->arena_bytes = bytes;
  return Status::kOk;
}

}  // namespace attn
