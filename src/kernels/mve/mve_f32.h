// kernels/mve/mve_f32.h: the vector exp of the Helium (MVE) float32 softmax
// (src/kernels/mve/softmax_f32_mve.cpp), in a header so that the board's
// kernel equivalence runner (port/cortex-m/conformance/kernel_equiv.cpp) can
// measure its accuracy lane by lane; and the pieces of the whole models'
// rows: a reciprocal, the norms' first pass and the vector ops of the
// activations (MapOps, for kernels/activation_f32.h). Include only under
// ATTN_HAVE_MVE_FP.
#pragma once

#include <arm_mve.h>

#include <cstdint>

namespace attn {
namespace detail {
namespace mve {

// exp of 4 lanes, each <= 0 or -INFINITY: the algorithm of the AVX2 and NEON
// variants. x = n ln2 + r with n = round(x / ln2) (the 1.5 * 2^23 shift trick
// leaves n + 127, the biased exponent of 2^n, in the low mantissa bits of t),
// |r| <= ln2 / 2; exp(r) by the degree-7 Cephes polynomial, fused
// multiply-adds as on AArch64 (within 1.24 ulp of exact there); results below
// ln(FLT_MIN) flushed to exactly 0, so -INFINITY gives exactly 0; NaN stays
// NaN (the softmax's NaN policy: no VMAXNM clamp, which would drop it). Helium's
// vector-by-scalar VFMA / VFMAS take the constants from core registers: the
// 8 vector registers keep no constant vectors.
inline float32x4_t exp_nonpositive(float32x4_t x) {
  const float kMin = -87.336544f;  // ln(FLT_MIN): 2^n stays a normal float
  // kMin > x: true for -INFINITY, false for NaN (VCMP's "lt" would be true for an unordered pair)
  const mve_pred16_t underflow = vcmpgtq_f32(vdupq_n_f32(kMin), x);
  x = vpselq_f32(vdupq_n_f32(kMin), x, underflow);  // keeps n + 127 >= 1; NaN stays NaN
  const float kShift = 12582912.0f + 127.0f;        // 1.5 * 2^23 + exponent bias
  const float32x4_t t = vfmaq_n_f32(vdupq_n_f32(kShift), x, 1.44269504088896341f);  // x log2(e) + shift
  const float32x4_t n = vsubq_n_f32(t, kShift);
  float32x4_t r = vfmaq_n_f32(x, n, -0.693359375f);  // ln2 split in two: n * ln2_hi is exact
  r = vfmaq_n_f32(r, n, 2.12194440e-4f);
  // exp(r) = 1 + r + r^2 P(r), P by Horner: p = p * r + c (VFMAS)
  float32x4_t p = vfmaq_n_f32(vdupq_n_f32(1.3981999507e-3f), r, 1.9875691500e-4f);
  p = vfmasq_n_f32(p, r, 8.3334519073e-3f);
  p = vfmasq_n_f32(p, r, 4.1665795894e-2f);
  p = vfmasq_n_f32(p, r, 1.6666665459e-1f);
  p = vfmasq_n_f32(p, r, 5.0000001201e-1f);
  p = vfmaq_f32(vaddq_n_f32(r, 1.0f), p, vmulq_f32(r, r));
  // times 2^n: n + 127 moved into the exponent field
  p = vmulq_f32(p, vreinterpretq_f32_u32(vshlq_n_u32(vreinterpretq_u32_f32(t), 23)));
  return vpselq_f32(vdupq_n_f32(0.0f), p, underflow);
}

// 1 / b for 4 lanes of positive normal b (Helium has no vector divide and
// no reciprocal estimate): the exponent-flip estimate 0x7EF311C3 - bits(b)
// (relative error below 1/8) and four Newton steps r += r (1 - b r) with
// fused multiply-adds (error 1/8 -> 2^-6 -> 2^-12 -> 2^-24 -> rounding):
// within about 1 ulp of 1 / b.
inline float32x4_t recip_positive(float32x4_t b) {
  float32x4_t r = vreinterpretq_f32_u32(vsubq_u32(vdupq_n_u32(0x7EF311C3u), vreinterpretq_u32_f32(b)));
  for (int i = 0; i < 4; ++i) r = vfmaq_f32(r, r, vfmsq_f32(vdupq_n_f32(1.0f), b, r));
  return r;
}

// The norms' first pass: y = x + r (x where r is null) over a row of n, and
// the lane sums of v (kSquares: of v^2), 4 lanes at a time, the tail
// predicated (VCTP: absent lanes load as 0 and add nothing).
template <bool kSquares>
inline float32x4_t residual_sums(const float* x, const float* r, int32_t n, float* y) {
  float32x4_t acc = vdupq_n_f32(0.0f);
  for (int32_t j = 0; j < n; j += 4) {
    const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n - j));
    float32x4_t v = vldrwq_z_f32(x + j, p);
    if (r != nullptr) v = vaddq_f32(v, vldrwq_z_f32(r + j, p));
    vstrwq_p_f32(y + j, v, p);
    acc = kSquares ? vfmaq_f32(acc, v, v) : vaddq_f32(acc, v);
  }
  return acc;
}

// The vector ops of the activations (kernels/activation_f32.h): 4 lanes, the
// tail predicated (VCTP: absent lanes load as 0 and are never stored). The
// clamp (VMINNM / VMAXNM) drops a NaN (the activations say where that is
// harmless); no vector divide: p / q = -p (1 / -q) by recip_positive.
struct MapOps {
  using Vec = float32x4_t;
  static constexpr int32_t kLanes = 4;
  static Vec dup(float c) { return vdupq_n_f32(c); }
  static Vec load(const float* p) { return vld1q_f32(p); }
  static void store(float* p, Vec v) { vst1q_f32(p, v); }
  static Vec load_first(const float* p, int32_t n) {
    return vldrwq_z_f32(p, vctp32q(static_cast<uint32_t>(n)));
  }
  static void store_first(float* p, int32_t n, Vec v) {
    vstrwq_p_f32(p, v, vctp32q(static_cast<uint32_t>(n)));
  }
  static Vec add(Vec a, Vec b) { return vaddq_f32(a, b); }
  static Vec mul(Vec a, Vec b) { return vmulq_f32(a, b); }
  static Vec fma(Vec acc, Vec a, Vec b) { return vfmaq_f32(acc, a, b); }
  static Vec clamp(Vec v, float lo, float hi) { return vmaxnmq_f32(dup(lo), vminnmq_f32(dup(hi), v)); }
  static Vec div_negative(Vec p, Vec q) { return vnegq_f32(vmulq_f32(p, recip_positive(vnegq_f32(q)))); }
  // sigmoid(z) = 1 / (1 + exp(-z)) of 4 lanes, any sign: with e = exp(-|z|)
  // (never overflows), 1 / (1 + e) for z >= 0 and e / (1 + e) below; 1 + e is
  // in [1, 2]. NaN stays NaN (exp_nonpositive keeps it). The AVX2 and NEON
  // variants' algorithm.
  static Vec sigmoid(Vec z) {
    const float32x4_t e = exp_nonpositive(vnegq_f32(vabsq_f32(z)));
    const float32x4_t num = vpselq_f32(e, vdupq_n_f32(1.0f), vcmpgtq_f32(vdupq_n_f32(0.0f), z));
    return vmulq_f32(num, recip_positive(vaddq_n_f32(e, 1.0f)));
  }
};

// Sum of the 4 lanes (Helium has no floating-point across-vector add).
inline float hsum(float32x4_t v) {
  return (vgetq_lane_f32(v, 0) + vgetq_lane_f32(v, 1)) + (vgetq_lane_f32(v, 2) + vgetq_lane_f32(v, 3));
}

}  // namespace mve
}  // namespace detail
}  // namespace attn
