// decode_fixed.cpp: incremental s8 and s16 self-attention over a KV cache in
// the arena.
//
// The schedule of decode_f32 on the integer forward's stages
// (attention/attend_fixed.h): each call handles its rows in chunks; a chunk
// makes room (drops the oldest rows when the cache has a window), projects
// its K and V rows (K rotated to their positions with rotary embedding)
// straight into the cache with project_kv(), then attends its queries over
// every cached row with the causal (and window) mask through attend(). V
// stays [rows, Dkv] in the cache on every target (the DSP forward's V^T
// layout would not let a window drop rows). The arithmetic is the forward's,
// and every sum is exact in integers, so the outputs are bit-identical to one
// causal forward over the same rows.
#include "attention/attend_fixed.h"
#include "attention/attention_fixed_common.h"
#include "attention/kv_cache.h"
#include "attn/decode.h"

namespace attn {
namespace detail {
namespace {

template <typename Act>
Status decode_fixed(const Plan& plan, const typename FixedOps<Act>::Weights& w, KvCache<Act>* cache,
                    const Act* x, int32_t n, Act* y, Arena& arena) {
  ATTN_TRY(check_decode_step(plan, FixedOps<Act>::kDType, cache, x, n, y));
  ATTN_TRY(check_weights(plan.config, w));
  // Every decode step attends causally over the cache, windowed with the
  // cache (decode_mask): its first new row sees the cache's rows and itself.
  Mask causal;
  causal.causal = true;
  causal.causal_offset = cache->length;
  causal.window = cache->window;
  ATTN_TRY(check_mask_covered(w.mask_coverage, w.mask_key_length, causal, plan.key_len));
  const AttentionConfig& c = plan.config;
  if (rope_enabled(c)) {  // the new rows' positions need rows of the converter's tables
    ATTN_TRY(check_rope_table(w.rope));
    ATTN_TRY(check_rope_positions(w.rope, cache->next_position(), n));
  }
  const int32_t E = c.embed_dim;
  const int32_t D = c.num_heads * c.head_dim;       // width of Q and O
  const int32_t Dkv = c.num_kv_heads * c.head_dim;  // width of K and V
  const size_t T = static_cast<size_t>(plan.tile_rows);
  const size_t mark = arena.mark();
  AttendScratch<Act> scratch{};  // Q tile [T, D], scores [R, capacity] int32, context tile [T, D]
  const Status carved =
      carve_tile_scratch(arena, T, static_cast<size_t>(D), static_cast<size_t>(plan.key_len), &scratch,
                         static_cast<size_t>(decode_score_rows(c, plan.query_len, plan.tile_rows)));
  if (carved != Status::kOk) {
    arena.release(mark);
    return carved;
  }

  const int32_t chunk = decode_chunk_rows(plan, *cache);
  for (int32_t r0 = 0; r0 < n; r0 += chunk) {
    const int32_t rows = chunk < n - r0 ? chunk : n - r0;
    const Act* xr = x + static_cast<ptrdiff_t>(r0) * E;  // [rows, E]
    kv_cache_make_room(cache, rows);
    // New K, V rows [rows, Dkv] at cache rows [length, length + rows), positions next_position() ..
    const Matrix<Act> k_new = matrix(cache->k + static_cast<ptrdiff_t>(cache->length) * Dkv, rows, Dkv);
    const Matrix<Act> v_new = matrix(cache->v + static_cast<ptrdiff_t>(cache->length) * Dkv, rows, Dkv);
    project_kv<Act, false>(c, plan.parallel, w, xr, xr, rows, cache->next_position(), k_new, v_new);
    cache->length += rows;

    // The chunk's queries are cache rows [length - rows, length).
    attend<Act, false>(c, plan.parallel, plan.tile_rows, w, decode_mask(*cache, rows), xr, rows,
                       cache->next_position() - rows, matrix<const Act>(cache->k, cache->length, Dkv),
                       matrix<const Act>(cache->v, cache->length, Dkv), y + static_cast<ptrdiff_t>(r0) * E,
                       scratch);
  }
  arena.release(mark);
  return Status::kOk;
}

}  // namespace
}  // namespace detail

#if ATTN_WITH_S8
Status decode_s8(const Plan& plan, const WeightsS8& w, KvCacheS8* cache, const int8_t* x, int32_t n,
                 int8_t* y, Arena& arena) {
  return detail::decode_fixed<int8_t>(plan, w, cache, x, n, y, arena);
}
#endif
#if ATTN_WITH_S16
Status decode_s16(const Plan& plan, const WeightsS16& w, KvCacheS16* cache, const int16_t* x, int32_t n,
                  int16_t* y, Arena& arena) {
  return detail::decode_fixed<int16_t>(plan, w, cache, x, n, y, arena);
}
#endif

}  // namespace attn
