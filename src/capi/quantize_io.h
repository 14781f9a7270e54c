// quantize_io.h: float <-> integer activations for the C API
// (attn_quantize_s8 / _s16, attn_dequantize_s8 / _s16 in attn/attn.h).
// Included by src/capi/quantize_io.cpp only, so that integer-only firmware
// that never calls these functions links no float code.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

#include "attn/attn.h"

namespace attn {
namespace quantize_io {

// scale finite and > 0 (checked on its bits, as the loader does), zero point in [lo, hi].
template <class T>
bool params_ok(float scale, int32_t zero_point) {
  uint32_t bits = 0;
  std::memcpy(&bits, &scale, sizeof bits);
  return bits != 0 && bits < 0x7F800000u && zero_point >= std::numeric_limits<T>::min() &&
         zero_point <= std::numeric_limits<T>::max();
}

// clamp(round_half_away(x / scale) + zero_point) in double, as attn::quantize_value
// (src/quant/), without libm: beyond the clamp range nothing needs rounding,
// and within it trunc is an int64 conversion and the fraction is exact.
template <class T>
T quantize_one(float x, double scale, int32_t zero_point) {
  const double lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  const double d = static_cast<double>(x) / scale;
  if (d != d) return static_cast<T>(zero_point);  // NaN: the real 0
  if (d + zero_point <= lo - 1.0) return std::numeric_limits<T>::min();
  if (d + zero_point >= hi + 1.0) return std::numeric_limits<T>::max();
  const double t = static_cast<double>(static_cast<int64_t>(d));  // trunc, |d| < 2^17
  const double f = d - t;
  double q = t + (f >= 0.5 ? 1.0 : 0.0) - (f <= -0.5 ? 1.0 : 0.0) + zero_point;
  q = q < lo ? lo : q > hi ? hi : q;
  return static_cast<T>(static_cast<int32_t>(q));
}

template <class T>
attn_status quantize(const float* x, size_t n, float scale, int32_t zero_point, T* q) {
  if (n > 0 && (x == nullptr || q == nullptr)) return ATTN_ERR_NULL_ARGUMENT;
  if (!params_ok<T>(scale, zero_point)) return ATTN_ERR_BAD_QUANT_PARAMS;
  const double s = static_cast<double>(scale);
  for (size_t i = 0; i < n; ++i) q[i] = quantize_one<T>(x[i], s, zero_point);
  return ATTN_OK;
}

// scale * (q - zero_point): |q - zero_point| < 2^17 is exact in float, so the
// float product is the exact product rounded once (as the float64 product
// rounded to float, which `attn run` computes).
template <class T>
attn_status dequantize(const T* q, size_t n, float scale, int32_t zero_point, float* y) {
  if (n > 0 && (q == nullptr || y == nullptr)) return ATTN_ERR_NULL_ARGUMENT;
  if (!params_ok<T>(scale, zero_point)) return ATTN_ERR_BAD_QUANT_PARAMS;
  for (size_t i = 0; i < n; ++i) y[i] = scale * static_cast<float>(static_cast<int32_t>(q[i]) - zero_point);
  return ATTN_OK;
}

}  // namespace quantize_io
}  // namespace attn
