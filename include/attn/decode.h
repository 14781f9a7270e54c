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
//
// Fixed point: plan_decode(cfg, DType::kS8 (kS16), ...), kv_cache_init_s8
// (_s16) and decode_s8 (_s16) do the same with the integer weights and I/O of
// forward_s8 / forward_s16 (attn/attention_fixed.h); the cache holds the
// projected int8 (int16) K and V. The outputs are bit-identical to one causal
// forward_s8 / forward_s16 over the same rows, in any split into calls: both
// run the same projection, score, softmax and weighted-sum kernels, and every
// sum is exact in integers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/arena.h"
#include "attn/attention.h"
#include "attn/attention_fixed.h"
#include "attn/status.h"

namespace attn {

// Arena bytes of a cache of `capacity` positions: K and V [capacity, Dkv] of
// `dtype` (f32, s8 or s16; 0 for any other dtype).
constexpr size_t kv_cache_arena_bytes(const AttentionConfig& c, DType dtype, int32_t capacity) {
  const uint64_t dkv = static_cast<uint64_t>(c.kv_dim() > 0 ? c.kv_dim() : 0);
  const uint64_t n = static_cast<uint64_t>(capacity > 0 ? capacity : 0) * dkv * dtype_bytes(dtype);
  const uint64_t bytes = 2 * ((n + (ATTN_ARENA_ALIGN - 1)) / ATTN_ARENA_ALIGN * ATTN_ARENA_ALIGN);
  const bool known = dtype == DType::kF32 || dtype == DType::kS8 || dtype == DType::kS16;
  return known && bytes <= SIZE_MAX ? static_cast<size_t>(bytes) : 0;
}

// Rows of a decode call's scores: T = min(tile_rows, max_rows), and at
// least min(G, 4) for G = num_heads / num_kv_heads query heads per K/V head:
// a one-row call scores the query heads of a K/V head together, as rows of
// one pass over their keys. (Internal: decode_arena_bytes and the decodes.)
namespace detail {
constexpr int32_t decode_score_rows(const AttentionConfig& c, int32_t max_rows, int32_t tile_rows) {
  const int32_t t = tile_rows < max_rows ? tile_rows : max_rows;
  const int32_t kvh = c.resolved_kv_heads();
  const int32_t g = kvh > 0 && c.num_heads % kvh == 0 ? c.num_heads / kvh : 1;
  const int32_t g4 = g < 4 ? g : 4;
  return t > g4 ? t : g4;
}
}  // namespace detail

// Arena bytes of one decode call (besides the cache): Q tile [T, D],
// scores [R, capacity] (R = detail::decode_score_rows()), O tile [T, D]. f32: all
// float; s8 / s16: Q and O tiles int8 / int16, scores int32 (the Q0.15
// probabilities in place).
constexpr size_t decode_arena_bytes(const AttentionConfig& c, DType dtype, int32_t max_rows, int32_t capacity,
                                    int32_t tile_rows = ATTN_TILE_ROWS) {
  if (c.embed_dim <= 0 || c.num_heads <= 0 || c.resolved_head_dim() <= 0 || max_rows <= 0 || capacity <= 0 ||
      tile_rows <= 0 || (dtype != DType::kF32 && dtype != DType::kS8 && dtype != DType::kS16)) {
    return 0;
  }
  const uint64_t e = dtype_bytes(dtype);  // bytes per Q / O element
  const uint64_t d = static_cast<uint64_t>(c.inner_dim());
  const uint64_t t = static_cast<uint64_t>(tile_rows < max_rows ? tile_rows : max_rows);
  const auto aligned = [](uint64_t n) -> uint64_t {
    return (n + (ATTN_ARENA_ALIGN - 1)) / ATTN_ARENA_ALIGN * ATTN_ARENA_ALIGN;
  };
  const uint64_t r = static_cast<uint64_t>(detail::decode_score_rows(c, max_rows, tile_rows));
  const uint64_t bytes = 2 * aligned(t * d * e) + aligned(r * static_cast<uint64_t>(capacity) * 4);
  return bytes <= SIZE_MAX ? static_cast<size_t>(bytes) : 0;
}

// Validate a self-attention config (kdim == vdim == E) for calls of at most
// max_rows rows over a cache of `capacity` positions. plan.decode is set,
// plan.query_len = max_rows, plan.key_len = capacity, plan.arena_bytes =
// decode_arena_bytes(). dtype: kF32, kS8 or kS16. Errors: those of
// plan_attention(), and kBadKeyDim / kBadValueDim for cross-attention configs.
Status plan_decode(const AttentionConfig& config, DType dtype, int32_t max_rows, int32_t capacity, Plan* out,
                   int32_t tile_rows = ATTN_TILE_ROWS);

// A KV cache of element type T: float (f32), int8_t (s8) or int16_t (s16).
// Each dtype has its own type, so a cache of one dtype cannot reach another
// dtype's decode; the init functions refuse a plan of another dtype.
template <class T>
struct KvCache {
  AttentionConfig config;  // resolved, from the plan
  T* k = nullptr;          // [capacity, Dkv]: (rotated) keys, row r at position start + r
  T* v = nullptr;          // [capacity, Dkv]
  int32_t capacity = 0;    // rows
  int32_t window = 0;      // 0: keep everything (kCacheFull when full); W: keep the last W positions
  int32_t length = 0;      // rows in use
  int32_t start = 0;       // position of row 0

  // start + length: at most INT32_MAX in a cache the decodes keep (64-bit
  // sum, so an edited cache past it gives a wrong value, not undefined behaviour).
  int32_t next_position() const { return static_cast<int32_t>(static_cast<int64_t>(start) + length); }
};
using KvCacheF32 = KvCache<float>;    // K, V float32
using KvCacheS8 = KvCache<int8_t>;    // K, V int8 with the zero points of WeightsS8 (k/v_zero_point)
using KvCacheS16 = KvCache<int16_t>;  // K, V int16, symmetric

// Carve a cache for `plan` (from plan_decode, of the function's dtype) from
// `arena`, which must outlive it: kv_cache_arena_bytes() bytes. window in
// [0, capacity]. Errors: kNullArgument, kBadDtype (a plan of another dtype),
// kPlanMismatch (not a decode plan), kBadWindow, kArenaTooSmall.
Status kv_cache_init_f32(const Plan& plan, int32_t window, Arena& arena, KvCacheF32* cache);
Status kv_cache_init_s8(const Plan& plan, int32_t window, Arena& arena, KvCacheS8* cache);
Status kv_cache_init_s16(const Plan& plan, int32_t window, Arena& arena, KvCacheS16* cache);

// Forget every cached position; the next row sits at position 0.
// Errors: kNullArgument.
Status kv_cache_reset(KvCacheF32* cache);
Status kv_cache_reset(KvCacheS8* cache);
Status kv_cache_reset(KvCacheS16* cache);

// Append rows x [n, E] (positions next_position() ..) and write their
// outputs y [n, E]. n in [1, plan.query_len]. Carves plan.arena_bytes from
// `arena` and gives them back. Without a window, kCacheFull (nothing
// changed) when length + n > capacity; with one, the oldest rows are dropped.
// Positions stop at INT32_MAX - 1: kSequenceTooLong (nothing changed) when
// next_position() + n > INT32_MAX (a window after 2^31 rows; reset to go on).
// Errors: kNullArgument, kBadDtype, kPlanMismatch, kBadQueryLength,
// kCacheFull, kSequenceTooLong, kArenaTooSmall.
Status decode_f32(const Plan& plan, const WeightsF32& weights, KvCacheF32* cache, const float* x, int32_t n,
                  float* y, Arena& arena);

// The integer decodes: x [n, E] int8 (int16) rows quantized as forward_s8's
// (forward_s16's) query input, y [n, E] in its output quantization; weights
// as for the forward. Same contract as decode_f32; in addition the weights'
// checks of the forward: kBadQuantParams, kBadHeadDim (s8: head_dim >= 2^14).
// With rotary embedding the rows at positions next_position() .. + n - 1 are
// rotated by the weights' RopeTable; a position past its rows gives
// kRopePositionOutOfRange (nothing changed), so a windowed cache decodes as
// far as the converter's --max-positions reach.
// Errors: kNullArgument, kBadDtype, kPlanMismatch (also: a cache made for
// another plan), kBadQueryLength, kCacheFull, kSequenceTooLong, kBadQuantParams,
// kBadHeadDim, kRopePositionOutOfRange, kArenaTooSmall, kMaskNotCalibrated
// (a decode attends causally over the cache's window, its first new row at
// causal_offset = cache length: weights whose mask_coverage is kAnyMask,
// kCausal with N <= cache length and no window, or kCausalWindow with the
// cache's window run; any other refuses).
Status decode_s8(const Plan& plan, const WeightsS8& weights, KvCacheS8* cache, const int8_t* x, int32_t n,
                 int8_t* y, Arena& arena);
Status decode_s16(const Plan& plan, const WeightsS16& weights, KvCacheS16* cache, const int16_t* x, int32_t n,
                  int16_t* y, Arena& arena);

}  // namespace attn
