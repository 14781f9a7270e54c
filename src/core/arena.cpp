// arena.cpp: bump allocation over a caller-owned, aligned buffer.
#include "attn/arena.h"

#include <cstdint>

namespace attn {

Status Arena::init(void* buffer, size_t bytes) {
  *this = Arena();
  if (buffer == nullptr) return Status::kNullArgument;
  if (reinterpret_cast<uintptr_t>(buffer) % ATTN_ARENA_ALIGN != 0) return Status::kArenaMisaligned;
  base_ = static_cast<uint8_t*>(buffer);
  capacity_ = bytes;
  return Status::kOk;
}

Status Arena::alloc(size_t bytes, void** out) {
  if (out == nullptr) return Status::kNullArgument;
  *out = nullptr;
  const size_t rounded = arena_round_up(bytes);
  if (base_ == nullptr || rounded > capacity_ - used_) return Status::kArenaTooSmall;
  *out = base_ + used_;
  used_ += rounded;
  if (used_ > high_water_) high_water_ = used_;
  return Status::kOk;
}

}  // namespace attn
