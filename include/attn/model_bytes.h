// attn/model_bytes.h: the two buffers of a whole model bound through the C
// API (attn_transformer_init_split: `scratch` and `state`; attn_transformer_init
// takes their sum) as constant expressions, for sizing static buffers at
// compile time: model_bytes() below. `attn emit-c MODEL --tokens-per-call N`
// writes the same numbers as NAME_ARENA_BYTES and NAME_STATE_BYTES.
//
// The handle's bookkeeping depends on the target's struct layouts: they are
// written out here for the two data models attn's targets have, 32-bit Arm
// (AAPCS, ILP32: Cortex-M, ARMv7-A) and 64-bit (LP64: x86-64, AArch64).
// The library checks them with static_asserts on every such target it is
// built for (src/capi/transformer_c.cpp), so a changed struct cannot leave
// them stale; on other targets model_bytes() gives {0, 0} (size the buffers
// at run time with attn_transformer_init_split_bytes).
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/config.h"
#include "attn/decode.h"
#include "attn/tensor.h"
#include "attn/transformer.h"
#include "attn/transformer_fixed.h"

namespace attn {
namespace handle {

// sizeof of each struct: the handle's Core, the dtype's TransformerWeights*,
// LayerWeights*, TransformerState* and KvCache*.
struct HandleLayout {
  uint64_t core, weights, layer, state, kv_cache;
};

// The layout for pointers of pointer_bytes (4: AAPCS, 8: LP64); all zero for
// another dtype or width.
constexpr HandleLayout handle_layout(DType dtype, size_t pointer_bytes) {
  if (pointer_bytes == 4) {
    switch (dtype) {
      case DType::kF32:
        return {128, 36, 80, 12, 56};
      case DType::kS8:
        return {128, 128, 328, 12, 56};
      case DType::kS16:
        return {128, 128, 296, 12, 56};
      default:
        break;
    }
  } else if (pointer_bytes == 8) {
    switch (dtype) {
      case DType::kF32:
        return {176, 72, 160, 16, 64};
      case DType::kS8:
        return {176, 192, 512, 16, 64};
      case DType::kS16:
        return {176, 192, 464, 16, 64};
      default:
        break;
    }
  }
  return {0, 0, 0, 0, 0};
}

constexpr uint64_t align_up(uint64_t n) {
  return (n + (ATTN_ARENA_ALIGN - 1)) / ATTN_ARENA_ALIGN * ATTN_ARENA_ALIGN;
}

// The handle's bookkeeping, in the order init carves it: the Core, the
// weights, the layer table [layers].
constexpr uint64_t handle_bytes(const HandleLayout& l, int32_t layers) {
  return align_up(l.core) + align_up(l.weights) + align_up(static_cast<uint64_t>(layers) * l.layer);
}

// The decoding state's bytes: its struct (the position), the KvCache array
// [layers], then each layer's caches of cache_bytes (kv_cache_arena_bytes);
// 0 without a cache.
constexpr uint64_t state_bytes(const HandleLayout& l, int32_t layers, uint64_t cache_bytes) {
  return cache_bytes == 0 ? 0
                          : align_up(l.state) + align_up(static_cast<uint64_t>(layers) * l.kv_cache) +
                                static_cast<uint64_t>(layers) * cache_bytes;
}

}  // namespace handle

// Whether this target's layouts are the written-out ones.
#if defined(__arm__) || defined(__aarch64__) || defined(__x86_64__)
#define ATTN_HANDLE_LAYOUT_KNOWN 1
#else
#define ATTN_HANDLE_LAYOUT_KNOWN 0
#endif

struct ModelBytes {
  size_t arena;  // the scratch buffer: the handle's bookkeeping, then one call's scratch
  size_t state;  // the state buffer: the decoding state, its KV caches (0 without capacity)
};

// The buffers of a model of config `c` in `dtype` bound for calls of up to
// tokens_per_call tokens and KV caches of `capacity` positions (0: none),
// with plans of tile_rows (attn_transformer_init plans with ATTN_TILE_ROWS),
// on a target with pointers of pointer_bytes: exactly what
// attn_transformer_init_split_bytes reports there, for any config
// plan_transformer accepts. {0, 0} for a shape that is not positive, a
// dtype without a whole-model runtime, or a pointer width with no
// written-out layout (pointer_bytes defaults to this target's, 0 where its
// layout is not written out).
constexpr ModelBytes model_bytes(const TransformerConfig& c, DType dtype, int32_t tokens_per_call,
                                 int32_t capacity, int32_t tile_rows = ATTN_TILE_ROWS,
                                 size_t pointer_bytes = ATTN_HANDLE_LAYOUT_KNOWN ? sizeof(void*) : 0) {
  const handle::HandleLayout l = handle::handle_layout(dtype, pointer_bytes);
  const uint64_t call = dtype == DType::kF32
                            ? transformer_arena_bytes(c, dtype, tokens_per_call, capacity, tile_rows)
                            : transformer_fixed_arena_bytes(c, dtype, tokens_per_call, capacity, tile_rows);
  const uint64_t cache = capacity > 0 ? kv_cache_arena_bytes(c.attention(), dtype, capacity) : 0;
  if (l.core == 0 || call == 0 || c.num_layers <= 0 || (capacity > 0 && cache == 0)) return {0, 0};
  const uint64_t arena = handle::handle_bytes(l, c.num_layers) + call;
  const uint64_t state = handle::state_bytes(l, c.num_layers, cache);
  if (arena > SIZE_MAX || state > SIZE_MAX) return {0, 0};
  return {static_cast<size_t>(arena), static_cast<size_t>(state)};
}

}  // namespace attn
