// handles.h: what the C entry points (attn/attn.h) in src/capi/*.cpp share:
// the C status of a Status, ATTN_TRY_C, and the handles.
//
// Handles are byte storage in the caller's memory. Each holds a magic word and
// a trivially copyable C++ object, moved in and out with memcpy (no aliasing
// or lifetime questions, no heap); a zeroed or failed handle has no magic and
// every call on it returns ATTN_ERR_BAD_HANDLE.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "attn/attn.h"
#include "attn/parallel.h"
#include "attn/status.h"

namespace attn {
namespace capi {

inline attn_status to_c(Status s) { return static_cast<attn_status>(s); }

// Returns the C status of expr when it fails.
#define ATTN_TRY_C(expr)                      \
  do {                                        \
    const Status attn_try_c_ = (expr);        \
    if (attn_try_c_ != Status::kOk) {         \
      return ::attn::capi::to_c(attn_try_c_); \
    }                                         \
  } while (0)

constexpr uint32_t kModelMagic = 0x4C444F4Du;  // "MODL": an attn_model

template <class T>
struct Box {
  uint32_t magic;
  T value;
};

template <class T, class Handle>
constexpr bool fits_handle() {
  return std::is_trivially_copyable<Box<T>>::value && sizeof(Box<T>) <= sizeof(Handle) &&
         alignof(Box<T>) <= alignof(Handle);
}

template <class T, class Handle>
void store(Handle* h, uint32_t magic, const T& value) {
  Box<T> box;
  box.magic = magic;
  box.value = value;
  std::memset(h, 0, sizeof(Handle));
  std::memcpy(h, &box, sizeof box);
}

template <class T, class Handle>
Status fetch(const Handle* h, uint32_t magic, T* out) {
  if (h == nullptr) return Status::kNullArgument;
  Box<T> box;
  std::memcpy(static_cast<void*>(&box), h, sizeof box);  // trivially copyable
  if (box.magic != magic) return Status::kBadHandle;
  *out = box.value;
  return Status::kOk;
}

// The C parallel-for (attn_plan_set_parallel) as the C++ one (attn/parallel.h).
// kParallelNotBuilt for a hook that would split (run set, workers >= 2) in a
// library built with ATTN_PARALLEL=0: said at set-up, not found out later
// as a forward that stays on one core.
inline Status check_parallel(attn_parallel_fn run, int32_t workers) {
  return !ATTN_PARALLEL && run != nullptr && workers >= 2 ? Status::kParallelNotBuilt : Status::kOk;
}

inline ParallelFor parallel_to_cpp(attn_parallel_fn run, void* ctx, int32_t workers) {
  static_assert(ATTN_PARALLEL_MIN_TASK_MACS == kParallelMinTaskMacs, "attn.h and attn/parallel.h differ");
  ParallelFor p;
  p.run = run;
  p.ctx = ctx;
  p.workers = workers;
  return p;
}

}  // namespace capi
}  // namespace attn
