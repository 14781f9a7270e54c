// kernels/quantize_io.h: the checks of the public activation conversions
// (attn::quantize_s8 / dequantize_s8 and the s16 pair, attn/kernels_fixed.h),
// shared by src/kernels/quantize_io_s8.cpp and _s16.cpp, which then run the
// dispatched variant.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

#include "attn/status.h"

namespace attn {
namespace detail {

// scale finite and > 0 (checked on its bits, as the loader does: no float
// compare), zero point in T's range, pointers present when n > 0.
template <class T>
Status check_quantize_io(const void* in, size_t n, float scale, int32_t zero_point, const void* out) {
  if (n > 0 && (in == nullptr || out == nullptr)) return Status::kNullArgument;
  uint32_t bits = 0;
  std::memcpy(&bits, &scale, sizeof bits);
  if (bits == 0 || bits >= 0x7F800000u || zero_point < std::numeric_limits<T>::min() ||
      zero_point > std::numeric_limits<T>::max()) {
    return Status::kBadQuantParams;
  }
  return Status::kOk;
}

}  // namespace detail
}  // namespace attn
