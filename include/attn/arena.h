// attn/arena.h: a bump allocator over a caller-owned buffer.
//
// The library never allocates from the heap; every scratch buffer comes from
// an Arena. The Arena never writes to its buffer itself and never hands out
// bytes outside it: a request that does not fit returns kArenaTooSmall.
//
// Every function that sizes a buffer, C++ and C alike, is named
//   <entry>_<buffer>_bytes       e.g. attention_arena_bytes, transformer_state_bytes,
//                                quantize_attention_storage_bytes, attn_kv_cache_arena_bytes
// <entry>: what the bytes are for (the op or call, with its dtype when it has
// one: pack_weights_f32_storage_bytes); <buffer>: which one, arena (scratch
// given back), state (kept between calls), storage (kept: tables, packed
// weights) or scratch (a converter's), left out where there is only one
// (dtype_bytes, attn_model_file_bytes). Each returns the exact count, as a
// constexpr size_t where the header can compute it (0: a shape it rejects),
// else through a Status / attn_status and an out-parameter.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/config.h"
#include "attn/status.h"

namespace attn {

// Round n up to a multiple of ATTN_ARENA_ALIGN (saturates instead of wrapping).
constexpr size_t arena_round_up(size_t n) {
  return n > SIZE_MAX - (ATTN_ARENA_ALIGN - 1)
             ? SIZE_MAX
             : (n + (ATTN_ARENA_ALIGN - 1)) & ~static_cast<size_t>(ATTN_ARENA_ALIGN - 1);
}

class Arena {
 public:
  Arena() = default;

  // Use `bytes` bytes at `buffer`. The buffer must be ATTN_ARENA_ALIGN-aligned
  // (e.g. `alignas(16) static uint8_t buf[N];`) so that plan() byte counts are
  // exact: kArenaMisaligned otherwise, kNullArgument for a null buffer.
  Status init(void* buffer, size_t bytes);

  // Carve `bytes` (rounded up to ATTN_ARENA_ALIGN) and store the address in
  // *out. On kArenaTooSmall nothing is carved and *out is set to null.
  Status alloc(size_t bytes, void** out);

  template <class T>
  Status alloc_array(size_t count, T** out) {
    if (out == nullptr) return Status::kNullArgument;
    *out = nullptr;
    if (count > SIZE_MAX / sizeof(T)) return Status::kArenaTooSmall;
    void* p = nullptr;
    ATTN_TRY(alloc(count * sizeof(T), &p));
    *out = static_cast<T*>(p);
    return Status::kOk;
  }

  // A position to return to with release(): forward() releases what it carved.
  size_t mark() const { return used_; }
  void release(size_t mark) { used_ = mark <= used_ ? mark : used_; }
  void reset() { used_ = 0; }

  size_t capacity() const { return capacity_; }
  size_t used() const { return used_; }
  size_t free_bytes() const { return capacity_ - used_; }
  // The most bytes ever in use since init(): size a static buffer from it.
  size_t high_water() const { return high_water_; }

 private:
  uint8_t* base_ = nullptr;
  size_t capacity_ = 0;
  size_t used_ = 0;
  size_t high_water_ = 0;
};

}  // namespace attn
