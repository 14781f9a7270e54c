// decode_s8.cpp: incremental int8 self-attention over a KV cache in the arena.
//
// The schedule of decode_f32 on forward_s8's stages (internal/attend_fixed.h):
// each call handles its rows in chunks; a chunk makes room (drops the oldest
// rows when the cache has a window), projects its K and V rows (K rotated to
// their positions with rotary embedding) straight into
// the cache with project_kv_s8(), then attends its queries over every cached
// row with the causal (and window) mask through attend_s8(). V stays
// [rows, Dkv] in the cache on every target (the DSP forward's V^T layout
// would not let a window drop rows). The arithmetic
// is the forward's, and every sum is exact in integers, so the outputs are
// bit-identical to one causal forward_s8 over the same rows.
#include "attn/decode.h"
#include "internal/attend_fixed.h"
#include "internal/attention_fixed_common.h"
#include "internal/kv_cache.h"

namespace attn {

Status kv_cache_init_s8(const Plan& plan, int32_t window, Arena& arena, KvCacheS8* cache) {
  return detail::kv_cache_init(plan, DType::kS8, window, arena, cache);
}

Status decode_s8(const Plan& plan, const WeightsS8& w, KvCacheS8* cache, const int8_t* x, int32_t n,
                 int8_t* y, Arena& arena) {
  ATTN_TRY(detail::check_decode_step(plan, DType::kS8, cache, x, n, y));
  ATTN_TRY(detail::check_weights_s8(plan.config, w));
  const AttentionConfig& c = plan.config;
  if (detail::rope_enabled(c)) {  // the new rows' positions need rows of the converter's tables
    ATTN_TRY(detail::check_rope_table(w.rope));
    ATTN_TRY(detail::check_rope_positions(w.rope, cache->next_position(), n));
  }
  const int32_t E = c.embed_dim;
  const int32_t D = c.num_heads * c.head_dim;       // width of Q and O
  const int32_t Dkv = c.num_kv_heads * c.head_dim;  // width of K and V
  const size_t T = static_cast<size_t>(plan.tile_rows);
  const size_t mark = arena.mark();
  detail::AttendScratchS8 scratch{};  // Q tile [T, D], scores [T, capacity] int32, context tile [T, D]
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

  const int32_t chunk = detail::decode_chunk_rows(plan, *cache);
  for (int32_t r0 = 0; r0 < n; r0 += chunk) {
    const int32_t rows = chunk < n - r0 ? chunk : n - r0;
    const int8_t* xr = x + static_cast<ptrdiff_t>(r0) * E;  // [rows, E]
    detail::kv_cache_make_room(cache, rows);
    // New K, V rows [rows, Dkv] at cache rows [length, length + rows), positions next_position() ..
    const MatS8 k_new = matrix(cache->k + static_cast<ptrdiff_t>(cache->length) * Dkv, rows, Dkv);
    const MatS8 v_new = matrix(cache->v + static_cast<ptrdiff_t>(cache->length) * Dkv, rows, Dkv);
    detail::project_kv_s8<false>(c, w, xr, xr, rows, cache->next_position(), k_new, v_new);
    cache->length += rows;

    // The chunk's queries are cache rows [length - rows, length).
    detail::attend_s8<false>(
        c, plan.tile_rows, w, detail::decode_mask(*cache, rows), xr, rows, cache->next_position() - rows,
        matrix<const int8_t>(cache->k, cache->length, Dkv),
        matrix<const int8_t>(cache->v, cache->length, Dkv), y + static_cast<ptrdiff_t>(r0) * E, scratch);
  }
  arena.release(mark);
  return Status::kOk;
}

}  // namespace attn
