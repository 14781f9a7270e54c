// attn/decode.h: incremental (autoregressive) self-attention over a KV cache.
//
// A decoder feeds tokens a few at a time; recomputing K and V for the whole
// history every step would waste almost all the work. The cache keeps the
// projected (and rotated) K and V rows in the arena; each call appends the
// new rows and attends them, causally, over everything cached.
//
//   attn::Plan plan;       // rows per call <= max_rows, cache of `capacity` positions
//   ATTN_TRY(attn::plan_decode(cfg, attn::DType::kF32, max_rows, capacity, &plan));
//   attn::KvCacheF32 cache;
//   ATTN_TRY(attn::kv_cache_init_f32(plan, /*window=*/0, cache_arena, &cache));
//   ATTN_TRY(attn::decode_f32(plan, weights, &cache, prompt, n_prompt, y, step_arena));  // prefill
//   ATTN_TRY(attn::decode_f32(plan, weights, &cache, x, 1, y, step_arena));               // one token
//
// decode_f32 over rows x_0 .. x_{L-1}, in any split into calls, computes what
// forward_f32 computes for the L rows as query, key and value with a causal
// mask (and Mask::window when the cache has a window).
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/arena.h"
#include "attn/attention.h"
#include "attn/status.h"

namespace attn {

// Arena bytes of a cache of `capacity` positions: K and V [capacity, Dkv].
constexpr size_t kv_cache_arena_bytes(const AttentionConfig& c, DType dtype, int32_t capacity) {
  const uint64_t dkv = static_cast<uint64_t>(c.kv_dim() > 0 ? c.kv_dim() : 0);
  const uint64_t n = static_cast<uint64_t>(capacity > 0 ? capacity : 0) * dkv * dtype_size(dtype);
  const uint64_t bytes = 2 * ((n + (ATTN_ARENA_ALIGN - 1)) / ATTN_ARENA_ALIGN * ATTN_ARENA_ALIGN);
  return dtype == DType::kF32 && bytes <= SIZE_MAX ? static_cast<size_t>(bytes) : 0;
}

// Arena bytes of one decode_f32 call (besides the cache): Q tile [T, D],
// scores [T, capacity], O tile [T, D].
constexpr size_t decode_arena_bytes(const AttentionConfig& c, DType dtype, int32_t max_rows, int32_t capacity,
                                    int32_t tile_rows = ATTN_TILE_ROWS) {
  if (c.embed_dim <= 0 || c.num_heads <= 0 || c.resolved_head_dim() <= 0 || max_rows <= 0 || capacity <= 0 ||
      tile_rows <= 0 || dtype != DType::kF32) {
    return 0;
  }
  const uint64_t d = static_cast<uint64_t>(c.inner_dim());
  const uint64_t t = static_cast<uint64_t>(tile_rows < max_rows ? tile_rows : max_rows);
  const auto aligned = [](uint64_t n) -> uint64_t {
    return (n + (ATTN_ARENA_ALIGN - 1)) / ATTN_ARENA_ALIGN * ATTN_ARENA_ALIGN;
  };
  const uint64_t bytes = 2 * aligned(t * d * 4) + aligned(t * static_cast<uint64_t>(capacity) * 4);
  return bytes <= SIZE_MAX ? static_cast<size_t>(bytes) : 0;
}

// Validate a self-attention config (kdim == vdim == E) for calls of at most
// max_rows rows over a cache of `capacity` positions. plan.decode is set,
// plan.query_len = max_rows, plan.key_len = capacity, plan.arena_bytes =
// decode_arena_bytes(). Errors: those of plan_attention(), and kBadKeyDim /
// kBadValueDim for cross-attention configs.
Status plan_decode(const AttentionConfig& config, DType dtype, int32_t max_rows, int32_t capacity, Plan* out,
                   int32_t tile_rows = ATTN_TILE_ROWS);

struct KvCacheF32 {
  AttentionConfig config;  // resolved, from the plan
  float* k = nullptr;      // [capacity, Dkv]: rotated keys, row r at position start + r
  float* v = nullptr;      // [capacity, Dkv]
  int32_t capacity = 0;    // rows
  int32_t window = 0;      // 0: keep everything (kCacheFull when full); W: keep the last W positions
  int32_t length = 0;      // rows in use
  int32_t start = 0;       // position of row 0

  int32_t next_position() const { return start + length; }
};

// Carve a cache for `plan` (from plan_decode) from `arena`, which must
// outlive it: kv_cache_arena_bytes() bytes. window in [0, capacity].
// Errors: kNullArgument, kPlanMismatch, kBadWindow, kArenaTooSmall.
Status kv_cache_init_f32(const Plan& plan, int32_t window, Arena& arena, KvCacheF32* cache);

// Forget every cached position; the next row sits at position 0.
Status kv_cache_reset(KvCacheF32* cache);

// Append rows x [n, E] (positions next_position() ..) and write their
// outputs y [n, E]. n in [1, plan.query_len]. Carves plan.arena_bytes from
// `arena` and gives them back. Without a window, kCacheFull (nothing
// changed) when length + n > capacity; with one, the oldest rows are dropped.
// Errors: kNullArgument, kBadDtype, kPlanMismatch, kBadQueryLength,
// kCacheFull, kArenaTooSmall.
Status decode_f32(const Plan& plan, const WeightsF32& weights, KvCacheF32* cache, const float* x, int32_t n,
                  float* y, Arena& arena);

}  // namespace attn
