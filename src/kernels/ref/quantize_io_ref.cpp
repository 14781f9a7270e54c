// Float <-> integer activations, portable scalar (the contract is beside the
// declarations in kernels/kernels_fixed.h):
//   quantize:   q = clamp(round_half_away(x / scale) + zero_point), x / scale in double;
//               +-infinity saturate, NaN gives the zero point
//   dequantize: y = scale * (q - zero_point), one float rounding
// int8 and int16 differ only in T. No libm: beyond the clamp range nothing
// needs rounding, and within it trunc is an int64 conversion and the
// fraction d - trunc(d) is exact.
#include <limits>

#include "attn/config.h"
#include "kernels/kernels_fixed.h"

namespace attn {
namespace detail {
namespace {

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
void quantize_ref(const float* x, size_t n, float scale, int32_t zero_point, T* q) {
  const double s = static_cast<double>(scale);
  for (size_t i = 0; i < n; ++i) q[i] = quantize_one<T>(x[i], s, zero_point);
}

// |q - zero_point| < 2^17 is exact in float, so the float product is the
// exact product rounded once.
template <class T>
void dequantize_ref(const T* q, size_t n, float scale, int32_t zero_point, float* y) {
  for (size_t i = 0; i < n; ++i) y[i] = scale * static_cast<float>(static_cast<int32_t>(q[i]) - zero_point);
}

}  // namespace

#if ATTN_WITH_S8
void quantize_s8_ref(const float* x, size_t n, float scale, int32_t zero_point, int8_t* q) {
  quantize_ref(x, n, scale, zero_point, q);
}
void dequantize_s8_ref(const int8_t* q, size_t n, float scale, int32_t zero_point, float* y) {
  dequantize_ref(q, n, scale, zero_point, y);
}
#endif
#if ATTN_WITH_S16
void quantize_s16_ref(const float* x, size_t n, float scale, int32_t zero_point, int16_t* q) {
  quantize_ref(x, n, scale, zero_point, q);
}
void dequantize_s16_ref(const int16_t* q, size_t n, float scale, int32_t zero_point, float* y) {
  dequantize_ref(q, n, scale, zero_point, y);
}
#endif

}  // namespace detail
}  // namespace attn
