// fuzz_run.cpp: libFuzzer target that runs what the .attn loader accepts.
//
// fuzz_model.cpp checks that every pointer the loader hands out lies inside
// the blob; this one goes on and runs the file through the C API (attn/attn.h)
// as a caller would: a whole model is bound to an arena and runs a forward, a
// prefill and one decode step; each attention block a forward and a decode.
// Every input is loaded with its CRC recomputed, so mutations of the values
// (weights, quantization constants, rope tables) reach the forwards, where
// ASan + UBSan flag any read past a table or any overflow the loader's value
// checks let through. Sizes are capped (a few tokens, a bounded arena), so
// each input runs in milliseconds.
// Build and run: tests/fuzz/run_fuzz.sh SECONDS run (not a ctest: it builds the
// whole library with clang, minutes on two cores).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

#include "attn/attn.h"
#include "attn/model.h"

namespace {

constexpr size_t kMaxArena = size_t{8} << 20;  // bytes: a larger model is only loaded
constexpr int32_t kTokens = 3;                 // tokens of a model call, rows of a block call

// A 16-aligned scratch buffer of n bytes (ASan sees its exact end).
struct Buffer {
  explicit Buffer(size_t n)
      : size(n), p(static_cast<uint8_t*>(::operator new (n == 0 ? 1 : n, std::align_val_t{16}))) {
    std::memset(p, 0x5A, size);
  }
  ~Buffer() { ::operator delete (p, std::align_val_t{16}); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  size_t size;
  uint8_t* p;
};

// A whole model: forward, then prefill and one step over a KV cache.
void run_model(const attn_model* model) {
  attn_transformer_config cfg;
  attn_dtype dt = 0;
  if (attn_model_transformer_config(model, &cfg, &dt) != ATTN_OK) __builtin_trap();
  const int32_t n = cfg.max_positions < kTokens ? cfg.max_positions : kTokens;
  const int32_t capacity = cfg.causal ? n + 1 : 0;
  size_t need = 0;
  if (attn_transformer_init_arena_bytes(model, n, capacity, &need) != ATTN_OK || need > kMaxArena) return;
  Buffer arena(need);
  attn_transformer tf;
  if (attn_transformer_init(&tf, model, n, capacity, 0, arena.p, arena.size) != ATTN_OK) __builtin_trap();
  attn_dtype got = 0;
  int32_t out_dim = 0;
  if (attn_transformer_shape(&tf, &got, &out_dim) != ATTN_OK || got != dt) __builtin_trap();
  int32_t tokens[kTokens + 1];
  for (int32_t i = 0; i <= kTokens; ++i) tokens[i] = (i * 7919) % cfg.vocab_size;
  std::vector<float> out(static_cast<size_t>(n) * static_cast<size_t>(out_dim));
  (void)attn_transformer_forward(&tf, tokens, n, 0, out.data());
  if (dt != ATTN_DTYPE_F32) {
    std::vector<int32_t> q(out.size());
    float scale = 0.0f;
    (void)attn_transformer_forward_s32(&tf, tokens, n, 1, q.data(), &scale);
  }
  if (capacity == 0) return;
  (void)attn_transformer_decode(&tf, tokens, n, 1, out.data());
  (void)attn_transformer_decode(&tf, tokens + n, 1, 1, out.data());
  // A sliding window of one position: the ring drops a row per token.
  if (attn_transformer_init(&tf, model, n, capacity, 1, arena.p, arena.size) != ATTN_OK) __builtin_trap();
  for (int32_t i = 0; i <= n; ++i) (void)attn_transformer_decode(&tf, tokens + i, 1, 0, out.data());
}

template <class T>
void fill(std::vector<T>* v, size_t n) {
  v->resize(n);
  for (size_t i = 0; i < n; ++i) (*v)[i] = static_cast<T>((i * 37) % 23);
}

// One block: a forward of kTokens rows over as many keys, then a decode.
template <class T, class W, class Io, class Cache>
void run_block_dtype(const attn_model* model, uint32_t b, const attn_block_info& info, attn_dtype dt,
                     attn_status (*weights_of)(const attn_model*, uint32_t, W*),
                     attn_status (*forward)(const attn_plan*, const W*, const attn_mask*, const Io*, void*,
                                            size_t),
                     attn_status (*cache_init)(Cache*, const attn_plan*, int32_t, void*, size_t),
                     attn_status (*decode)(const attn_plan*, const W*, Cache*, const T*, int32_t, T*, void*,
                                           size_t)) {
  W w;
  if (weights_of(model, b, &w) != ATTN_OK) __builtin_trap();
  const attn_config& c = info.config;
  attn_plan plan;
  if (attn_plan_init(&plan, &c, dt, kTokens, kTokens, 0) != ATTN_OK) return;
  size_t need = 0;
  if (attn_plan_arena_bytes(&plan, &need) != ATTN_OK) __builtin_trap();
  if (need > kMaxArena) return;
  std::vector<T> q, k, v, y;
  fill(&q, static_cast<size_t>(kTokens) * static_cast<size_t>(c.embed_dim));
  fill(&k, static_cast<size_t>(kTokens) * static_cast<size_t>(c.kdim));
  fill(&v, static_cast<size_t>(kTokens) * static_cast<size_t>(c.vdim));
  y.resize(q.size());
  {
    Buffer arena(need);
    Io io;
    std::memset(&io, 0, sizeof io);
    io.query = q.data();
    io.key = k.data();
    io.value = v.data();
    io.output = y.data();
    attn_mask mask;
    std::memset(&mask, 0, sizeof mask);
    mask.causal = 1;
    (void)forward(&plan, &w, &mask, &io, arena.p, arena.size);
  }
  if (c.kdim != c.embed_dim || c.vdim != c.embed_dim) return;  // decode: self-attention only
  attn_plan dplan;
  if (attn_plan_init_decode(&dplan, &c, dt, kTokens, kTokens + 1, 0) != ATTN_OK) __builtin_trap();
  size_t cache_bytes = 0;
  if (attn_kv_cache_arena_bytes(&dplan, &cache_bytes) != ATTN_OK ||
      attn_plan_arena_bytes(&dplan, &need) != ATTN_OK)
    __builtin_trap();
  if (cache_bytes > kMaxArena || need > kMaxArena) return;
  Buffer cache_buf(cache_bytes), arena(need);
  Cache cache;
  if (cache_init(&cache, &dplan, 0, cache_buf.p, cache_buf.size) != ATTN_OK) __builtin_trap();
  (void)decode(&dplan, &w, &cache, q.data(), kTokens, y.data(), arena.p, arena.size);
  (void)decode(&dplan, &w, &cache, q.data(), 1, y.data(), arena.p, arena.size);
}

void run_block(const attn_model* model, uint32_t b) {
  attn_block_info info;
  if (attn_model_block(model, b, &info) != ATTN_OK) __builtin_trap();
  switch (info.dtype) {
    case ATTN_DTYPE_F32:
      run_block_dtype<float>(model, b, info, info.dtype, attn_model_block_weights_f32, attn_forward_f32,
                             attn_kv_cache_init_f32, attn_decode_f32);
      break;
    case ATTN_DTYPE_S8:
      run_block_dtype<int8_t>(model, b, info, info.dtype, attn_model_block_weights_s8, attn_forward_s8,
                              attn_kv_cache_init_s8, attn_decode_s8);
      break;
    case ATTN_DTYPE_S16:
      run_block_dtype<int16_t>(model, b, info, info.dtype, attn_model_block_weights_s16, attn_forward_s16,
                               attn_kv_cache_init_s16, attn_decode_s16);
      break;
    default:
      __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Buffer buf(size);
  if (size) std::memcpy(buf.p, data, size);
  if (size >= attn::format::kCrcStart) {
    const uint32_t crc = attn::crc32(buf.p + attn::format::kCrcStart, size - attn::format::kCrcStart);
    std::memcpy(buf.p + offsetof(attn::format::Header, crc32), &crc, sizeof crc);
  }
  attn_model model;
  if (attn_model_load(&model, buf.p, size) != ATTN_OK) return 0;
  attn_transformer_config cfg;
  attn_dtype dt = 0;
  if (attn_model_transformer_config(&model, &cfg, &dt) == ATTN_OK) {
    run_model(&model);
    return 0;
  }
  uint32_t blocks = 0;
  if (attn_model_block_count(&model, &blocks) != ATTN_OK) __builtin_trap();
  for (uint32_t b = 0; b < blocks && b < 4; ++b) run_block(&model, b);
  return 0;
}
