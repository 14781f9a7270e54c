// decode.cpp: what every dtype's decode shares: the decode planner, its plan
// check, and the cache's init and reset (attn/decode.h). Free of float code, so an
// integer-only build (ATTN_DTYPES=s8) has them without decode_f32.cpp.
#include "attn/decode.h"
#include "attention/kv_cache.h"
#include "attention/mask.h"
#include "attn/config.h"

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

namespace detail {

Status check_decode_plan(const Plan& plan, DType dtype) {
  return check_plan_made_by(plan, dtype, true, plan_decode);
}

}  // namespace detail

Status kv_cache_reset(KvCacheF32* cache) { return detail::kv_cache_reset(cache); }
Status kv_cache_reset(KvCacheS8* cache) { return detail::kv_cache_reset(cache); }
Status kv_cache_reset(KvCacheS16* cache) { return detail::kv_cache_reset(cache); }

// Each dtype's init only where the dtype is compiled in (ATTN_DTYPES).
#if ATTN_WITH_F32
Status kv_cache_init_f32(const Plan& plan, int32_t window, Arena& arena, KvCacheF32* cache) {
  return detail::kv_cache_init(plan, DType::kF32, window, arena, cache);
}
#endif
#if ATTN_WITH_S8
Status kv_cache_init_s8(const Plan& plan, int32_t window, Arena& arena, KvCacheS8* cache) {
  return detail::kv_cache_init(plan, DType::kS8, window, arena, cache);
}
#endif
#if ATTN_WITH_S16
Status kv_cache_init_s16(const Plan& plan, int32_t window, Arena& arena, KvCacheS16* cache) {
  return detail::kv_cache_init(plan, DType::kS16, window, arena, cache);
}
#endif

}  // namespace attn
