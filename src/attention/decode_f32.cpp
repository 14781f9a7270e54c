// decode_f32.cpp: incremental self-attention over a KV cache in the arena.
//
// Each call handles its rows in chunks: make room (drop the oldest rows when
// the cache has a window), project the chunk's K and V straight into the
// cache (keys rotated to their positions), then attend the chunk's queries
// over every cached row with the causal (and window) mask, through the same
// attend_f32() loop the full forward uses.
#include "attention/attend_f32.h"
#include "attention/kv_cache.h"
#include "attention/packed_f32.h"
#include "attn/decode.h"
#include "kernels/kernel_table.h"
#include "kernels/linear_split.h"

namespace attn {

Status decode_f32(const Plan& plan, const WeightsF32& w, KvCacheF32* cache, const float* x, int32_t n,
                  float* y, Arena& arena) {
  ATTN_TRY(detail::check_decode_step(plan, DType::kF32, cache, x, n, y));
  ATTN_TRY(detail::check_weights_f32(plan.config, w));
  const AttentionConfig& c = plan.config;
  const int32_t E = c.embed_dim;
  const int32_t D = c.num_heads * c.head_dim;
  const int32_t Dkv = c.num_kv_heads * c.head_dim;
  const size_t T = static_cast<size_t>(plan.tile_rows);
  const size_t mark = arena.mark();
  detail::AttendScratchF32 scratch{};  // Q tile [T, D], scores [T, capacity], O tile [T, D]
  const Status carved = detail::carve_tile_scratch(arena, T, static_cast<size_t>(D),
                                                   static_cast<size_t>(plan.key_len), &scratch);
  if (carved != Status::kOk) {
    arena.release(mark);
    return carved;
  }

  const detail::PanelsF32 panels = detail::packed_panels_f32(c, w);  // nulls unless w.packed
  const int32_t chunk = detail::decode_chunk_rows(plan, *cache);
  for (int32_t r0 = 0; r0 < n; r0 += chunk) {
    const int32_t rows = chunk < n - r0 ? chunk : n - r0;
    const float* xr = x + static_cast<ptrdiff_t>(r0) * E;  // [rows, E]
    detail::kv_cache_make_room(cache, rows);
    // New K, V rows [rows, Dkv] at cache rows [length, length + rows).
    const MatF32 k_new = matrix(cache->k + static_cast<ptrdiff_t>(cache->length) * Dkv, rows, Dkv);
    const MatF32 v_new = matrix(cache->v + static_cast<ptrdiff_t>(cache->length) * Dkv, rows, Dkv);
    detail::linear_packed_f32(plan.parallel, matrix(xr, rows, E), matrix(w.wk, Dkv, E), panels.k,
                              c.bias ? w.bk : nullptr, k_new);
    detail::linear_packed_f32(plan.parallel, matrix(xr, rows, E), matrix(w.wv, Dkv, E), panels.v,
                              c.bias ? w.bv : nullptr, v_new);
    if (c.rope_base != 0.0f) detail::rope_f32_ref(k_new, c.head_dim, cache->next_position(), c.rope_base);
    cache->length += rows;

    // The chunk's queries are cache rows [length - rows, length).
    detail::attend_f32(c, plan.parallel, plan.tile_rows, w, detail::decode_mask(*cache, rows), xr, rows,
                       cache->next_position() - rows, matrix<const float>(cache->k, cache->length, Dkv),
                       matrix<const float>(cache->v, cache->length, Dkv), y + static_cast<ptrdiff_t>(r0) * E,
                       nullptr, scratch);
  }
  arena.release(mark);
  return Status::kOk;
}

}  // namespace attn
