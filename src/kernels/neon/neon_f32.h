// kernels/neon/neon_f32.h: the float32 NEON kernels of the neon variants
// (src/kernels/neon/*_f32_neon.cpp), which instantiate them with block sizes that
// fit the register file (AArch64: 32 quad registers, ARMv7-A: 16). Include
// only under ATTN_HAVE_NEON.
//
// The same algorithms as the AVX2 kernels, 4 lanes wide:
//   dot_gemm  out[j][i..i+4) = alpha * a[i..i+4) . b[j] (+ biases): linear, and
//             scores for a few query rows;
//             RA rows of `a` x CB rows of `b` per block, K read along rows
//   nn_gemm   c = alpha * a b with b read along rows: weighted sum, and scores
//             against K^T panels packed on the stack;
//             R rows x V vectors of 4 columns per block
//   softmax_row with a vector exp
// Tails narrower than a vector (K % 4 in dot_gemm, N % 4 in nn_gemm) are
// finished by scalar loops.
#pragma once

#include <arm_neon.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "attn/tensor.h"
#include "kernels/arch.h"
#include "kernels/kernels_f32.h"
#include "kernels/tile_driver.h"

namespace attn {
namespace detail {
namespace neon {

// acc + a * b: fused where the FPU has FMA (AArch64; ARMv7 with VFPv4).
inline float32x4_t mla(float32x4_t acc, float32x4_t a, float32x4_t b) {
#if defined(__aarch64__) || defined(__ARM_FEATURE_FMA)
  return vfmaq_f32(acc, a, b);
#else
  return vmlaq_f32(acc, a, b);
#endif
}

// [sum(v0), sum(v1), sum(v2), sum(v3)]
inline float32x4_t sum4(float32x4_t v0, float32x4_t v1, float32x4_t v2, float32x4_t v3) {
#if defined(__aarch64__)
  return vpaddq_f32(vpaddq_f32(v0, v1), vpaddq_f32(v2, v3));
#else
  const float32x2_t s0 = vpadd_f32(vget_low_f32(v0), vget_high_f32(v0));
  const float32x2_t s1 = vpadd_f32(vget_low_f32(v1), vget_high_f32(v1));
  const float32x2_t s2 = vpadd_f32(vget_low_f32(v2), vget_high_f32(v2));
  const float32x2_t s3 = vpadd_f32(vget_low_f32(v3), vget_high_f32(v3));
  return vcombine_f32(vpadd_f32(s0, s1), vpadd_f32(s2, s3));
#endif
}

inline float hsum(float32x4_t v) {
#if defined(__aarch64__)
  return vaddvq_f32(v);
#else
  const float32x2_t s = vpadd_f32(vget_low_f32(v), vget_high_f32(v));
  return vget_lane_f32(vpadd_f32(s, s), 0);
#endif
}

inline float hmax(float32x4_t v) {
#if defined(__aarch64__)
  return vmaxvq_f32(v);
#else
  const float32x2_t m = vpmax_f32(vget_low_f32(v), vget_high_f32(v));
  return vget_lane_f32(vpmax_f32(m, m), 0);
#endif
}

// ---- dot_gemm: out[Nb, Ma] = b[Nb, K] a[Ma, K]^T + biases (kernels/tile_driver.h)
// The K tail (K % 4) and the epilogue scalar, per output.
struct DotOps {
  using Vec = float32x4_t;
  static constexpr int32_t kLanes = 4;
  static Vec zero() { return vdupq_n_f32(0.0f); }
  static Vec load(const float* p) { return vld1q_f32(p); }
  static Vec fma(Vec acc, Vec a, Vec b) { return mla(acc, a, b); }

  template <size_t RA, size_t CB>
  static void finish(const DotArgs& g, int32_t i0, int32_t j0, DotTile<DotOps, RA, CB>& t) {
    const float32x4_t zero = vdupq_n_f32(0.0f);
    ATTN_UNROLL
    for (size_t c = 0; c < CB; ++c) {
      float32x4_t col[4] = {zero, zero, zero, zero};  // rows past RA sum to 0 and are not stored
      ATTN_UNROLL
      for (size_t r = 0; r < RA; ++r) col[r] = t.acc[r][c];
      float s[4];
      vst1q_f32(s, sum4(col[0], col[1], col[2], col[3]));  // alpha below, after the K tail
      const int32_t j = j0 + static_cast<int32_t>(c);
      float* o = g.out + static_cast<ptrdiff_t>(j) * g.ldo + i0;
      for (size_t r = 0; r < RA; ++r) {
        float v = s[r];
        for (int32_t k = t.k; k < g.K; ++k) v += t.a[r][k] * t.b[c][k];  // K tail
        v *= g.alpha;
        if (g.bias_i != nullptr) v += g.bias_i[static_cast<ptrdiff_t>(i0) + static_cast<ptrdiff_t>(r)];
        if (g.bias_j != nullptr) v += g.bias_j[j];
        o[r] = v;
      }
    }
  }
};

// Blocks of 4 rows of `a` by CB rows of `b`.
template <size_t CB>
inline void dot_gemm(const DotArgs& g, int32_t Ma, int32_t Nb) {
  detail::dot_gemm<DotOps, CB>(g, Ma, Nb);
}
// The same, one row of a at a time (the same bits; kernels/stream.h).
template <size_t CB>
inline void dot_gemm_by_row(const DotArgs& g, int32_t Ma, int32_t Nb) {
  detail::dot_gemm_by_row<DotOps, CB>(g, Ma, Nb);
}

// ---- nn_gemm: c[M, N] = alpha * a[M, K] b[K, N] --------------------------------
// NnArgs: kernels/tile_driver.h.

// Rows [m0, m0 + R), columns [n0, n0 + 4 V).
template <size_t R, size_t V>
inline void nn_block(const NnArgs& g, int32_t m0, int32_t n0) {
  float32x4_t acc[R][V];
  ATTN_UNROLL
  for (size_t r = 0; r < R; ++r) {
    ATTN_UNROLL
    for (size_t v = 0; v < V; ++v) acc[r][v] = vdupq_n_f32(0.0f);
  }
  const ptrdiff_t lda = g.lda, ldb = g.ldb;
  const float* a = g.a + static_cast<ptrdiff_t>(m0) * lda;  // [R, K]
  const float* b = g.b + n0;                                // [K, 4 V]
  for (int32_t k = 0; k < g.K; ++k, b += ldb) {
    float32x4_t bv[V];
    ATTN_UNROLL
    for (size_t v = 0; v < V; ++v) bv[v] = vld1q_f32(b + 4 * v);
    ATTN_UNROLL
    for (size_t r = 0; r < R; ++r) {
      const float32x4_t ar = vld1q_dup_f32(a + static_cast<ptrdiff_t>(r) * lda + k);
      ATTN_UNROLL
      for (size_t v = 0; v < V; ++v) acc[r][v] = mla(acc[r][v], ar, bv[v]);
    }
  }
  ATTN_UNROLL
  for (size_t r = 0; r < R; ++r) {
    float* c = g.c + (static_cast<ptrdiff_t>(m0) + static_cast<ptrdiff_t>(r)) * g.ldc + n0;
    ATTN_UNROLL
    for (size_t v = 0; v < V; ++v) vst1q_f32(c + 4 * v, vmulq_n_f32(acc[r][v], g.alpha));
  }
}

// Rows [m0, m0 + R) over all N columns: V-vector blocks, single vectors, then
// the last N % 4 columns by a scalar loop.
template <size_t R, size_t V>
inline void nn_rows(const NnArgs& g, int32_t m0, int32_t N) {
  const int32_t wide = static_cast<int32_t>(4 * V);
  int32_t n = 0;
  for (; n + wide <= N; n += wide) nn_block<R, V>(g, m0, n);
  for (; n + 4 <= N; n += 4) nn_block<R, 1>(g, m0, n);
  for (size_t r = 0; r < R; ++r) {
    const int32_t m = m0 + static_cast<int32_t>(r);
    const float* ar = g.a + static_cast<ptrdiff_t>(m) * g.lda;  // [K]
    float* cr = g.c + static_cast<ptrdiff_t>(m) * g.ldc;        // [N]
    for (int32_t j = n; j < N; ++j) {
      float acc = 0.0f;
      for (int32_t k = 0; k < g.K; ++k) acc += ar[k] * g.b[static_cast<ptrdiff_t>(k) * g.ldb + j];
      cr[j] = acc * g.alpha;
    }
  }
}

template <size_t R, size_t V>
inline void nn_gemm(const NnArgs& g, int32_t M, int32_t N) {
  int32_t m = 0;
  for (; m + static_cast<int32_t>(R) <= M; m += static_cast<int32_t>(R)) nn_rows<R, V>(g, m, N);
  with_size<R - 1>(M - m, [&](auto r) { nn_rows<decltype(r)::value, V>(g, m, N); });  // the last M % R rows
}

// ---- scores: s[T, S] = scale * q[T, d] k[S, d]^T ------------------------------
// As the AVX2 variant: for T >= 4 query rows, 16 keys at a time are copied
// transposed into a [d, 16] panel on the stack (d <= 256: 16 KiB) and nn_gemm
// runs every query row against it; fewer rows, or a deeper d, take dot_gemm.
template <size_t CB, size_t R, size_t V>
inline void scores(ConstMatF32 q, ConstMatF32 k, float scale, MatF32 s) {
  constexpr int32_t kKeys = 16, kDepth = 256, kMinRows = 4;
  const int32_t T = q.rows, S = k.rows, d = q.cols;
  if (T < kMinRows || d > kDepth) {
    const DotArgs g{k.data, k.stride, q.data, q.stride, d, s.data, s.stride, nullptr, nullptr, scale};
    dot_gemm<CB>(g, S, T);  // out[t][j .. j+4) = k[j .. j+4) . q[t]
    return;
  }
  alignas(16) float panel[kDepth * kKeys];  // K^T of 16 keys [d, 16]
  for (int32_t n0 = 0; n0 < S; n0 += kKeys) {
    const int32_t nk = S - n0 < kKeys ? S - n0 : kKeys;
    for (int32_t j = 0; j < nk; ++j) {
      const float* src = k.row(n0 + j);  // [d]
      for (int32_t c = 0; c < d; ++c) panel[c * kKeys + j] = src[c];
    }
    const NnArgs g{q.data, q.stride, panel, kKeys, d, scale, s.data + n0, s.stride};
    nn_gemm<R, V>(g, T, nk);
  }
}

// ---- softmax ------------------------------------------------------------------
// exp of 4 lanes, each <= 0 or -INFINITY: the algorithm of the AVX2 variant
// (Cephes polynomial, n + 127 placed in the exponent by the 1.5 * 2^23 shift
// trick, results below ln(FLT_MIN) flushed to exactly 0; NaN stays NaN, so a
// NaN score makes the softmax row NaN, the ref's NaN policy). Checked under qemu
// on every 13th float in [-87.33, 0]: within 1.24 ulp of the exact exp on
// AArch64, 1.26 ulp on ARMv7 (unfused multiply-accumulate).
inline float32x4_t exp_nonpositive(float32x4_t x) {
  const float32x4_t kMin = vdupq_n_f32(-87.336544f);
  const uint32x4_t underflow = vcltq_f32(x, kMin);  // true for -INFINITY, false for NaN
  x = vmaxq_f32(x, kMin);                           // FMAX / VMAX propagate NaN
  const float32x4_t kShift = vdupq_n_f32(12582912.0f + 127.0f);
  const float32x4_t t = mla(kShift, x, vdupq_n_f32(1.44269504088896341f));
  const float32x4_t n = vsubq_f32(t, kShift);
  float32x4_t r = vsubq_f32(x, vmulq_n_f32(n, 0.693359375f));  // n * ln2_hi is exact
  r = mla(r, n, vdupq_n_f32(2.12194440e-4f));
  float32x4_t p = vdupq_n_f32(1.9875691500e-4f);
  p = mla(vdupq_n_f32(1.3981999507e-3f), p, r);
  p = mla(vdupq_n_f32(8.3334519073e-3f), p, r);
  p = mla(vdupq_n_f32(4.1665795894e-2f), p, r);
  p = mla(vdupq_n_f32(1.6666665459e-1f), p, r);
  p = mla(vdupq_n_f32(5.0000001201e-1f), p, r);
  p = mla(vaddq_f32(r, vdupq_n_f32(1.0f)), p, vmulq_f32(r, r));
  const uint32x4_t two_n = vshlq_n_u32(vreinterpretq_u32_f32(t), 23);
  p = vmulq_f32(p, vreinterpretq_f32_u32(two_n));
  return vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(p), underflow));
}

inline void softmax_row(float* row, int32_t n) {
  const int32_t n4 = n & ~3;
  const int32_t rest = n - n4;
  float tail[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};  // the last n % 4, padded
  for (int32_t j = 0; j < rest; ++j) tail[j] = row[n4 + j];

  float32x4_t vmax = vld1q_f32(tail);
  for (int32_t j = 0; j < n4; j += 4) vmax = vmaxq_f32(vmax, vld1q_f32(row + j));
  const float max = hmax(vmax);  // NaN with a NaN in the row (FMAX propagates it): every exp NaN
  if (max == -INFINITY) {        // fully masked (or empty): all weights 0; all NaN if a NaN is there
    softmax_row_without_max(row, n);
    return;
  }

  const float32x4_t vm = vdupq_n_f32(max);
  float32x4_t sum0 = vdupq_n_f32(0.0f), sum1 = sum0;
  int32_t j = 0;
  for (; j + 8 <= n4; j += 8) {
    const float32x4_t e0 = exp_nonpositive(vsubq_f32(vld1q_f32(row + j), vm));
    const float32x4_t e1 = exp_nonpositive(vsubq_f32(vld1q_f32(row + j + 4), vm));
    vst1q_f32(row + j, e0);
    vst1q_f32(row + j + 4, e1);
    sum0 = vaddq_f32(sum0, e0);
    sum1 = vaddq_f32(sum1, e1);
  }
  if (j < n4) {
    const float32x4_t e = exp_nonpositive(vsubq_f32(vld1q_f32(row + j), vm));
    vst1q_f32(row + j, e);
    sum0 = vaddq_f32(sum0, e);
  }
  const float32x4_t et = exp_nonpositive(vsubq_f32(vld1q_f32(tail), vm));  // padding lanes give 0
  sum1 = vaddq_f32(sum1, et);

  const float inv = 1.0f / hsum(vaddq_f32(sum0, sum1));  // sum >= 1: the max entry gives exp(0)
  for (j = 0; j < n4; j += 4) vst1q_f32(row + j, vmulq_n_f32(vld1q_f32(row + j), inv));
  vst1q_f32(tail, vmulq_n_f32(et, inv));
  for (j = 0; j < rest; ++j) row[n4 + j] = tail[j];
}

// ---- the whole models' rows (norms, activations) ------------------------------
// a / b: one division on AArch64 (FDIV); on ARMv7-A (no vector divide) the
// reciprocal estimate and two Newton steps (VRECPE, VRECPS), within about
// 2 ulp of the quotient for the finite, normal b of the activations below.
inline float32x4_t div(float32x4_t a, float32x4_t b) {
#if defined(__aarch64__)
  return vdivq_f32(a, b);
#else
  float32x4_t r = vrecpeq_f32(b);
  r = vmulq_f32(r, vrecpsq_f32(b, r));
  r = vmulq_f32(r, vrecpsq_f32(b, r));
  return vmulq_f32(a, r);
#endif
}

// The norms' first pass: y = x + r (x where r is null) over a row of n, and
// the sum of v (kSquares: of v^2): 4 lanes at a time into two accumulators
// (alternate vectors), the last n % 4 scalar.
template <bool kSquares>
inline float residual_sum(const float* x, const float* r, int32_t n, float* y) {
  const auto step = [](float32x4_t acc, float32x4_t v) {
    return kSquares ? mla(acc, v, v) : vaddq_f32(acc, v);
  };
  const int32_t n4 = n & ~3;
  float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0;
  int32_t j = 0;
  for (; j < n4; j += 4) {
    float32x4_t v = vld1q_f32(x + j);
    if (r != nullptr) v = vaddq_f32(v, vld1q_f32(r + j));
    vst1q_f32(y + j, v);
    if (j & 4) {
      s1 = step(s1, v);
    } else {
      s0 = step(s0, v);
    }
  }
  float sum = hsum(vaddq_f32(s0, s1));
  for (; j < n; ++j) {
    const float v = r != nullptr ? x[j] + r[j] : x[j];
    y[j] = v;
    if constexpr (kSquares) {
      sum += v * v;
    } else {
      sum += v;
    }
  }
  return sum;
}

// The vector ops of the activations (kernels/activation_f32.h): DotOps'
// (4 lanes, load, mla) and the last n % 4 through a padded copy on the stack.
// The clamp keeps a NaN (FMIN / FMAX, VMIN / VMAX propagate it); the quotient
// by div above.
struct MapOps : DotOps {
  static Vec dup(float c) { return vdupq_n_f32(c); }
  static void store(float* p, Vec v) { vst1q_f32(p, v); }
  static Vec load_first(const float* p, int32_t n) {
    float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int32_t i = 0; i < n; ++i) t[i] = p[i];
    return vld1q_f32(t);
  }
  static void store_first(float* p, int32_t n, Vec v) {
    float t[4];
    vst1q_f32(t, v);
    for (int32_t i = 0; i < n; ++i) p[i] = t[i];
  }
  static Vec add(Vec a, Vec b) { return vaddq_f32(a, b); }
  static Vec mul(Vec a, Vec b) { return vmulq_f32(a, b); }
  static Vec clamp(Vec v, float lo, float hi) { return vmaxq_f32(dup(lo), vminq_f32(dup(hi), v)); }
  static Vec div_negative(Vec p, Vec q) { return div(p, q); }
  // sigmoid(z) = 1 / (1 + exp(-z)) of 4 lanes, any sign: with e = exp(-|z|)
  // (never overflows), 1 / (1 + e) for z >= 0 and e / (1 + e) below (the sign
  // bit picks). NaN stays NaN. The AVX2 variant's algorithm.
  static Vec sigmoid(Vec z) {
    const float32x4_t e = exp_nonpositive(vnegq_f32(vabsq_f32(z)));
    const uint32x4_t neg = vreinterpretq_u32_s32(vshrq_n_s32(vreinterpretq_s32_f32(z), 31));
    const float32x4_t one = vdupq_n_f32(1.0f);
    return div(vbslq_f32(neg, e, one), vaddq_f32(one, e));
  }
};

}  // namespace neon
}  // namespace detail
}  // namespace attn
