// decode_f32.cpp: incremental self-attention over a KV cache in the arena.
//
// Each call handles its rows in chunks: make room (drop the oldest rows when
// the cache has a window), project the chunk's K and V straight into the
// cache (keys rotated to their positions), then attend the chunk's queries
// over every cached row with the causal (and window) mask, through the same
// attend_f32() loop the full forward uses.
#include <cstring>

#include "attn/decode.h"
#include "internal/attend_f32.h"
#include "internal/kernels_f32.h"

namespace attn {

Status plan_decode(const AttentionConfig& config, DType dtype, int32_t max_rows, int32_t capacity, Plan* out,
                   int32_t tile_rows) {
  ATTN_TRY(plan_attention(config, dtype, max_rows, capacity, out, tile_rows));
  if (out->config.kdim != out->config.embed_dim) return Status::kBadKeyDim;
  if (out->config.vdim != out->config.embed_dim) return Status::kBadValueDim;
  out->arena_bytes = decode_arena_bytes(config, dtype, max_rows, capacity, tile_rows);
  out->decode = true;
  return out->arena_bytes != 0 ? Status::kOk : Status::kBadDtype;
}

namespace {

// The plan must be one plan_decode() makes, unchanged.
Status check_plan(const Plan& plan) {
  if (plan.dtype != DType::kF32) return Status::kBadDtype;
  Plan fresh;
  if (!plan.decode ||
      plan_decode(plan.config, plan.dtype, plan.query_len, plan.key_len, &fresh, plan.tile_rows) !=
          Status::kOk ||
      fresh.arena_bytes != plan.arena_bytes || fresh.tile_rows != plan.tile_rows) {
    return Status::kPlanMismatch;
  }
  return Status::kOk;
}

}  // namespace

Status kv_cache_init_f32(const Plan& plan, int32_t window, Arena& arena, KvCacheF32* cache) {
  if (cache == nullptr) return Status::kNullArgument;
  *cache = KvCacheF32();
  ATTN_TRY(check_plan(plan));
  if (window < 0 || window > plan.key_len) return Status::kBadWindow;
  const size_t rows = static_cast<size_t>(plan.key_len);
  const size_t dkv = static_cast<size_t>(plan.config.kv_dim());
  const size_t mark = arena.mark();
  float* k = nullptr;  // [capacity, Dkv]
  float* v = nullptr;  // [capacity, Dkv]
  Status st = arena.alloc_array(rows * dkv, &k);
  if (st == Status::kOk) st = arena.alloc_array(rows * dkv, &v);
  if (st != Status::kOk) {
    arena.release(mark);
    return st;
  }
  cache->config = plan.config;
  cache->k = k;
  cache->v = v;
  cache->capacity = plan.key_len;
  cache->window = window;
  return Status::kOk;
}

Status kv_cache_reset(KvCacheF32* cache) {
  if (cache == nullptr) return Status::kNullArgument;
  cache->length = 0;
  cache->start = 0;
  return Status::kOk;
}

Status decode_f32(const Plan& plan, const WeightsF32& w, KvCacheF32* cache, const float* x, int32_t n,
                  float* y, Arena& arena) {
  ATTN_TRY(check_plan(plan));
  if (cache == nullptr || x == nullptr || y == nullptr || cache->k == nullptr || cache->v == nullptr) {
    return Status::kNullArgument;
  }
  if (w.wq == nullptr || w.wk == nullptr || w.wv == nullptr || w.wo == nullptr) return Status::kNullArgument;
  const AttentionConfig& c = plan.config;
  if (c.bias && (w.bq == nullptr || w.bk == nullptr || w.bv == nullptr || w.bo == nullptr)) {
    return Status::kNullArgument;
  }
  if (cache->capacity != plan.key_len || cache->config.kv_dim() != c.kv_dim()) return Status::kPlanMismatch;
  if (n <= 0 || n > plan.query_len) return Status::kBadQueryLength;
  if (cache->window == 0 && cache->length + n > cache->capacity) return Status::kCacheFull;

  const int32_t E = c.embed_dim;
  const int32_t D = c.num_heads * c.head_dim;
  const int32_t Dkv = c.num_kv_heads * c.head_dim;
  const size_t T = static_cast<size_t>(plan.tile_rows);
  const size_t mark = arena.mark();
  detail::AttendScratchF32 scratch{};  // Q tile [T, D], scores [T, capacity], O tile [T, D]
  const Status carved = [&] {
    ATTN_TRY(arena.alloc_array(T * static_cast<size_t>(D), &scratch.q));
    ATTN_TRY(arena.alloc_array(T * static_cast<size_t>(plan.key_len), &scratch.s));
    ATTN_TRY(arena.alloc_array(T * static_cast<size_t>(D), &scratch.o));
    return Status::kOk;
  }();
  if (carved != Status::kOk) {
    arena.release(mark);
    return carved;
  }

  // With a window W, a chunk of m rows needs the W-1 rows before it plus
  // itself in the cache: m <= capacity - W + 1.
  int32_t chunk = plan.tile_rows;
  if (cache->window > 0 && cache->capacity - cache->window + 1 < chunk)
    chunk = cache->capacity - cache->window + 1;
  Mask mask;
  mask.causal = true;
  mask.window = cache->window;

  for (int32_t r0 = 0; r0 < n; r0 += chunk) {
    const int32_t rows = chunk < n - r0 ? chunk : n - r0;
    const float* xr = x + static_cast<ptrdiff_t>(r0) * E;  // [rows, E]
    // Make room: drop the oldest rows (only reachable with a window).
    const int32_t overflow = cache->length + rows - cache->capacity;
    if (overflow > 0) {
      const size_t keep = static_cast<size_t>(cache->length - overflow) * static_cast<size_t>(Dkv);
      std::memmove(cache->k, cache->k + static_cast<ptrdiff_t>(overflow) * Dkv, keep * sizeof(float));
      std::memmove(cache->v, cache->v + static_cast<ptrdiff_t>(overflow) * Dkv, keep * sizeof(float));
      cache->start += overflow;
      cache->length -= overflow;
    }
    // New K, V rows [rows, Dkv] at cache rows [length, length + rows).
    const MatF32 k_new = matrix(cache->k + static_cast<ptrdiff_t>(cache->length) * Dkv, rows, Dkv);
    const MatF32 v_new = matrix(cache->v + static_cast<ptrdiff_t>(cache->length) * Dkv, rows, Dkv);
    detail::linear_f32(matrix(xr, rows, E), matrix(w.wk, Dkv, E), c.bias ? w.bk : nullptr, k_new);
    detail::linear_f32(matrix(xr, rows, E), matrix(w.wv, Dkv, E), c.bias ? w.bv : nullptr, v_new);
    if (c.rope_base != 0.0f) detail::rope_f32(k_new, c.head_dim, cache->next_position(), c.rope_base);
    cache->length += rows;

    // The chunk's queries are cache rows [length - rows, length).
    mask.causal_offset = cache->length - rows;
    detail::attend_f32(c, plan.tile_rows, w, mask, xr, rows, cache->next_position() - rows,
                       matrix<const float>(cache->k, cache->length, Dkv),
                       matrix<const float>(cache->v, cache->length, Dkv), y + static_cast<ptrdiff_t>(r0) * E,
                       nullptr, scratch);
  }
  arena.release(mark);
  return Status::kOk;
}

}  // namespace attn
