// kernels/activation_f32.h: the FFN's float32 activations (SiLU, GELU with
// erf, GELU with tanh), written once for every SIMD ISA, and the in-place
// map that applies them to a row (times `up`, the gate, when given).
//
// An ISA instantiates them with its vector ops A (kernels/x86/avx2_f32.h,
// kernels/neon/neon_f32.h, kernels/mve/mve_f32.h: struct MapOps):
//   using Vec;  static constexpr int32_t kLanes;
//   static Vec dup(float c);
//   static Vec load(const float* p);  static void store(float* p, Vec v);
//   static Vec load_first(const float* p, int32_t n);      // lanes [0, n), 0 above
//   static void store_first(float* p, int32_t n, Vec v);   // lanes [0, n) only
//   static Vec add(Vec a, Vec b), mul(Vec a, Vec b);
//   static Vec fma(Vec acc, Vec a, Vec b);                 // acc + a b
//   static Vec clamp(Vec v, float lo, float hi);           // the ISA's NaN rule
//   static Vec div_negative(Vec p, Vec q);                 // p / q for q < 0
//   static Vec sigmoid(Vec z);                             // 1 / (1 + exp(-z))
// Each ISA's ops are its own instructions (FMA or VMLA, a division or
// Newton steps), so the results are those of the ISA's own loops; the
// variant tester (tests/variant_tester.h) checks each against the ref.
#pragma once

#include <cstdint>

namespace attn {
namespace detail {
namespace act {

// x[j] = f(x[j]) (* up[j] when up is not null) for j < n, in place, kLanes at
// a time; the last n % kLanes through load_first / store_first (f sees 0 in
// the absent lanes, which are never stored).
template <class A, class F>
inline void map_times(float* x, const float* up, int32_t n, F f) {
  using Vec = typename A::Vec;
  int32_t j = 0;
  for (; j + A::kLanes <= n; j += A::kLanes) {
    Vec a = f(A::load(x + j));
    if (up != nullptr) a = A::mul(a, A::load(up + j));
    A::store(x + j, a);
  }
  if (j < n) {
    const int32_t rest = n - j;
    Vec a = f(A::load_first(x + j, rest));
    if (up != nullptr) a = A::mul(a, A::load_first(up + j, rest));
    A::store_first(x + j, rest, a);
  }
}

// SiLU (Llama's gate): x sigmoid(x).
template <class A>
struct Silu {
  typename A::Vec operator()(typename A::Vec v) const { return A::mul(v, A::sigmoid(v)); }
};

// erf by Eigen's rational approximation (generic_fast_erf_float: an odd
// degree-13 numerator over an even degree-8 denominator on x clamped to
// [-4, 4], where erf is +-1 in float): within a few ulp of erf. The
// denominator is negative, |q| in [0.0142, 2.4] (div_negative). The clamp
// keeps a NaN where the ISA's does (x86, NEON); where it drops one
// (Helium's VMINNM / VMAXNM), gelu's x/2 (1 + erf) is NaN again.
template <class A>
inline typename A::Vec erf(typename A::Vec a) {
  using Vec = typename A::Vec;
  const Vec x = A::clamp(a, -4.0f, 4.0f);
  const Vec x2 = A::mul(x, x);
  Vec p = A::fma(A::dup(2.77068142495902e-08f), x2, A::dup(-2.72614225801306e-10f));
  p = A::fma(A::dup(-2.10102402082508e-06f), x2, p);
  p = A::fma(A::dup(-5.69250639462346e-05f), x2, p);
  p = A::fma(A::dup(-7.34990630326855e-04f), x2, p);
  p = A::fma(A::dup(-2.95459980854025e-03f), x2, p);
  p = A::fma(A::dup(-1.60960333262415e-02f), x2, p);
  p = A::mul(x, p);
  Vec q = A::fma(A::dup(-2.13374055278905e-04f), x2, A::dup(-1.45660718464996e-05f));
  q = A::fma(A::dup(-1.68282697438203e-03f), x2, q);
  q = A::fma(A::dup(-7.37332916720468e-03f), x2, q);
  q = A::fma(A::dup(-1.42647390514189e-02f), x2, q);
  return A::div_negative(p, q);
}

// GELU (exact): x/2 (1 + erf(x / sqrt(2))). The cancellation in 1 + erf(x)
// for x << 0 is the ref's too (it computes the same formula with std::erf),
// so the two agree within a few ulp of |x|.
template <class A>
struct Gelu {
  typename A::Vec operator()(typename A::Vec v) const {
    const typename A::Vec e = erf<A>(A::mul(v, A::dup(0.707106781186547524f)));
    return A::mul(A::mul(v, A::dup(0.5f)), A::add(A::dup(1.0f), e));
  }
};

// GELU, tanh approximation: x/2 (1 + tanh(y)) = x sigmoid(2y),
// y = sqrt(2/pi) (x + 0.044715 x^3). The sigmoid takes exp of a non-positive
// argument (no overflow) and has no cancellation for x << 0, where the ref's
// 1 + tanh(y) loses the digits that the two then differ by (a few ulp of |x|).
template <class A>
struct GeluTanh {
  typename A::Vec operator()(typename A::Vec v) const {
    using Vec = typename A::Vec;
    const Vec v3 = A::mul(A::mul(v, v), v);
    const Vec y = A::mul(A::fma(v, v3, A::dup(0.044715f)), A::dup(0.797884560802865356f));
    return A::mul(v, A::sigmoid(A::add(y, y)));
  }
};

}  // namespace act
}  // namespace detail
}  // namespace attn
