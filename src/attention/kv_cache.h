// attention/kv_cache.h: the dtype-independent part of decoding over a KV
// cache (attn/decode.h), shared by decode_f32, decode_s8 and decode_s16:
// plan and argument checks, carving a cache, and the ring bookkeeping.
// Integer-only and free of float code, so integer-only firmware links it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "attn/decode.h"

namespace attn {
namespace detail {

// The plan is one plan_decode() made for `dtype`, unchanged: kBadDtype
// (another dtype), kPlanMismatch (a forward plan, or edited). decode.cpp.
Status check_decode_plan(const Plan& plan, DType dtype);

// Carve K and V [capacity, Dkv] of T for `plan` from `arena`.
template <class T>
Status kv_cache_init(const Plan& plan, DType dtype, int32_t window, Arena& arena, KvCache<T>* cache) {
  if (cache == nullptr) return Status::kNullArgument;
  *cache = KvCache<T>();
  ATTN_TRY(check_decode_plan(plan, dtype));
  if (window < 0 || window > plan.key_len) return Status::kBadWindow;
  const size_t rows = static_cast<size_t>(plan.key_len);
  const size_t dkv = static_cast<size_t>(plan.config.kv_dim());
  const size_t mark = arena.mark();
  T* k = nullptr;  // [capacity, Dkv]
  T* v = nullptr;  // [capacity, Dkv]
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

template <class T>
Status kv_cache_reset(KvCache<T>* cache) {
  if (cache == nullptr) return Status::kNullArgument;
  cache->length = 0;
  cache->start = 0;
  return Status::kOk;
}

// Checks of one decode call that do not depend on the dtype's weights: the
// plan, the pointers, the cache against the plan, n, and a full cache.
template <class T, class X, class Y>
Status check_decode_step(const Plan& plan, DType dtype, const KvCache<T>* cache, const X* x, int32_t n,
                         const Y* y) {
  ATTN_TRY(check_decode_plan(plan, dtype));
  if (cache == nullptr || x == nullptr || y == nullptr || cache->k == nullptr || cache->v == nullptr) {
    return Status::kNullArgument;
  }
  if (cache->capacity != plan.key_len || cache->config.kv_dim() != plan.config.kv_dim() ||
      cache->window < 0 || cache->window > cache->capacity || cache->length < 0 ||
      cache->length > cache->capacity || cache->start < 0) {
    return Status::kPlanMismatch;
  }
  if (n <= 0 || n > plan.query_len) return Status::kBadQueryLength;
  if (cache->window == 0 && cache->length + n > cache->capacity) return Status::kCacheFull;
  // A window drops old rows forever, but positions (start + length) only
  // count up: the rows' positions must stay int32 (kSequenceTooLong).
  if (int64_t{cache->start} + cache->length + n > INT32_MAX) return Status::kSequenceTooLong;
  return Status::kOk;
}

// Rows per chunk of a call. With a window W, a chunk of m rows needs the
// W - 1 rows before it plus itself in the cache: m <= capacity - W + 1.
template <class T>
int32_t decode_chunk_rows(const Plan& plan, const KvCache<T>& cache) {
  int32_t chunk = plan.tile_rows;
  if (cache.window > 0 && cache.capacity - cache.window + 1 < chunk)
    chunk = cache.capacity - cache.window + 1;
  return chunk;
}

// Make room for `rows` new rows: drop the oldest (only reachable with a
// window, as check_decode_step refused the rest).
template <class T>
void kv_cache_make_room(KvCache<T>* cache, int32_t rows) {
  const int32_t overflow = cache->length + rows - cache->capacity;
  if (overflow <= 0) return;
  const ptrdiff_t dkv = cache->config.kv_dim();
  const size_t keep = static_cast<size_t>(cache->length - overflow) * static_cast<size_t>(dkv);
  std::memmove(cache->k, cache->k + overflow * dkv, keep * sizeof(T));
  std::memmove(cache->v, cache->v + overflow * dkv, keep * sizeof(T));
  cache->start += overflow;
  cache->length -= overflow;
}

// The mask of a chunk whose `rows` queries are the cache's last rows:
// causal (and windowed) over the cache rows.
template <class T>
Mask decode_mask(const KvCache<T>& cache, int32_t rows) {
  Mask mask;
  mask.causal = true;
  mask.window = cache.window;
  mask.causal_offset = cache.length - rows;
  return mask;
}

}  // namespace detail
}  // namespace attn
