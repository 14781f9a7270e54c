// kernels/model_fixed_rows.h: the row loops of the whole integer models'
// norms, residual rescales and int32-output linears, written once for every
// variant (the ref's scalar steps and each ISA's vector passes), as
// kernels/tile_driver.h is for the f32 dot_gemm.
//
// A variant's file specializes the op's passes for its Isa and instantiates
// the op in one line (`template struct NormRows<Isa::kAvx2>;`); the kernel
// table names the instantiations. The passes cover the first columns of a
// row (whole vectors; the whole row where the ISA predicates or has no
// vectors; none in the ref), and the shared scalar steps of
// kernels/kernels_model_fixed.h take the rest, so every variant's last
// columns are the ref's own arithmetic:
//
//   NormOps<kIsa>, over one row x [E], vectors over [0, n = cols(E)):
//     static int32_t cols(int32_t E);
//     static int64_t sum(const int32_t* x, int32_t n);                     // sum x
//     static uint32_t max_abs(const int32_t* x, int32_t n, int32_t mean);  // max |sat32(x - mean)|
//     static uint64_t sum_sq(const int32_t* x, int32_t n, int32_t mean, int32_t k);
//     template <typename Out>  // y [0, n)
//     static void store(const int32_t* x, int32_t n, int32_t mean, int32_t u_shift, int32_t R,
//                       const NormFixed& p, int32_t lo, int32_t hi, Out* y);
//   ResidualOps<kIsa>, over one row of n columns, each returning how many it did:
//     template <typename Act>
//     static int32_t add(int32_t* x, const Act* y, int32_t n, const RescaleFixed& r);
//     template <typename Act>
//     static int32_t to_act(const int32_t* x, const RescaleFixed& r, Act* y, int32_t n,
//                           int32_t lo, int32_t hi);
//   Out32DotOps<kIsa>, every row (the dot_rows contract of kernels/kernels_model_fixed.h),
//   int8 (Acc int32) and int16 (Acc int64) activations:
//     static void rows(Matrix<const Act> x, ConstMatS8 w, const Acc* bias, Epilogue out);
//
// Include only in the kernel files: the table's file sees the declarations
// alone, so each ISA's instantiation is compiled with that ISA's flags only
// (no weak symbol shared by two ISAs).
#pragma once

#include <cstdint>

#include "kernels/kernels_model_fixed.h"

namespace attn {
namespace detail {

// The int8 / int16 / int32 output range (constant expressions: clang-tidy's
// dynamic-initialization check misreads variable templates).
template <typename Out>
// NOLINTNEXTLINE(bugprone-dynamic-static-initializers)
constexpr int32_t kOutLo = sizeof(Out) == 1   ? -128
                           : sizeof(Out) == 2 ? -32768
                                              : INT32_MIN;
template <typename Out>
// NOLINTNEXTLINE(bugprone-dynamic-static-initializers)
constexpr int32_t kOutHi = sizeof(Out) == 1   ? 127
                           : sizeof(Out) == 2 ? 32767
                                              : INT32_MAX;

// ---- norm: NormFixed's per-row steps (kernels/kernels_model_fixed.h) --------
template <Isa kIsa, typename Out>
void norm_rows(ConstMatS32 x, NormKind kind, const NormFixed& p, Matrix<Out> y) {
  using V = NormOps<kIsa>;
  constexpr int32_t lo = kOutLo<Out>, hi = kOutHi<Out>;
  const int32_t E = x.cols, n = V::cols(E);
  for (int32_t r = 0; r < x.rows; ++r) {
    const int32_t* xr = x.row(r);  // [E]
    int32_t mean = 0;
    if (kind == NormKind::kLayerNorm) mean = norm_mean(norm_sum_from(xr, n, E, V::sum(xr, n)), E);
    const int32_t b = bit_length_u32(norm_max_abs_from(xr, n, E, mean, V::max_abs(xr, n, mean)));
    const int32_t k = norm_reduce_shift(b);
    const uint64_t sq = norm_sq_from(xr, n, E, mean, k, V::sum_sq(xr, n, mean, k));  // < E * 2^46
    const int32_t R = norm_multiplier(sq, E, p.eps, b, k);
    Out* yr = y.row(r);
    V::store(xr, n, mean, 29 - b, R, p, lo, hi, yr);
    norm_store_from(xr, n, E, mean, 29 - b, R, p, lo, hi, yr);
  }
}

#if ATTN_WITH_S8
template <Isa kIsa>
void NormRows<kIsa>::s8(ConstMatS32 x, NormKind kind, const NormFixed& p, MatS8 y) {
  norm_rows<kIsa>(x, kind, p, y);
}
#endif
#if ATTN_WITH_S16
template <Isa kIsa>
void NormRows<kIsa>::s16(ConstMatS32 x, NormKind kind, const NormFixed& p, MatS16 y) {
  norm_rows<kIsa>(x, kind, p, y);
}
#endif
template <Isa kIsa>
void NormRows<kIsa>::s32(ConstMatS32 x, NormKind kind, const NormFixed& p, MatS32 y) {
  norm_rows<kIsa>(x, kind, p, y);
}

// ---- residual: RescaleFixed's 32-bit steps -----------------------------------
template <Isa kIsa, typename Act>
void residual_add_rows(MatS32 x, Matrix<const Act> y, const RescaleFixed& r) {
  for (int32_t i = 0; i < x.rows; ++i) {
    int32_t* xr = x.row(i);
    const Act* yr = y.row(i);
    for (int32_t c = ResidualOps<kIsa>::add(xr, yr, x.cols, r); c < x.cols; ++c)
      xr[c] = residual_add_element(xr[c], yr[c], r);
  }
}

template <Isa kIsa, typename Act>
void residual_to_rows(ConstMatS32 x, const RescaleFixed& r, Matrix<Act> y) {
  constexpr int32_t lo = kOutLo<Act>, hi = kOutHi<Act>;
  for (int32_t i = 0; i < x.rows; ++i) {
    const int32_t* xr = x.row(i);
    Act* yr = y.row(i);
    for (int32_t c = ResidualOps<kIsa>::to_act(xr, r, yr, x.cols, lo, hi); c < x.cols; ++c) {
      const int64_t q = residual_to_act_element(xr[c], r);
      yr[c] = static_cast<Act>(q < lo ? lo : q > hi ? hi : q);
    }
  }
}

#if ATTN_WITH_S8
template <Isa kIsa>
void ResidualRows<kIsa>::add_s8(MatS32 x, ConstMatS8 y, const RescaleFixed& r) {
  residual_add_rows<kIsa>(x, y, r);
}
#endif
#if ATTN_WITH_S16
template <Isa kIsa>
void ResidualRows<kIsa>::add_s16(MatS32 x, ConstMatS16 y, const RescaleFixed& r) {
  residual_add_rows<kIsa>(x, y, r);
}
#endif
#if ATTN_WITH_S8
template <Isa kIsa>
void ResidualRows<kIsa>::to_s8(ConstMatS32 x, const RescaleFixed& r, MatS8 y) {
  residual_to_rows<kIsa>(x, r, y);
}
#endif
#if ATTN_WITH_S16
template <Isa kIsa>
void ResidualRows<kIsa>::to_s16(ConstMatS32 x, const RescaleFixed& r, MatS16 y) {
  residual_to_rows<kIsa>(x, r, y);
}
#endif

// ---- W2 into the residual, the LM head: ref's epilogue (RescaleInto) --------
template <Isa kIsa, Out32 kOut, typename Act, typename Acc>
void out32_rows(Matrix<const Act> x, ConstMatS8 w, const Acc* bias, const int32_t* multiplier,
                const int32_t* shift, MatS32 y) {
  Out32DotOps<kIsa>::rows(x, w, bias, RescaleInto<kOut>{multiplier, shift, y});
}

#if ATTN_WITH_S8
template <Isa kIsa>
void Out32Rows<kIsa>::linear_residual_s8(ConstMatS8 x, ConstMatS8 w, const int32_t* bias,
                                         const int32_t* multiplier, const int32_t* shift, MatS32 r) {
  out32_rows<kIsa, Out32::kAddToResidual>(x, w, bias, multiplier, shift, r);
}
#endif
#if ATTN_WITH_S16
template <Isa kIsa>
void Out32Rows<kIsa>::linear_residual_s16(ConstMatS16 x, ConstMatS8 w, const int64_t* bias,
                                          const int32_t* multiplier, const int32_t* shift, MatS32 r) {
  out32_rows<kIsa, Out32::kAddToResidual>(x, w, bias, multiplier, shift, r);
}
#endif
#if ATTN_WITH_S8
template <Isa kIsa>
void Out32Rows<kIsa>::logits_s8(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                                const int32_t* shift, MatS32 y) {
  out32_rows<kIsa, Out32::kStore>(x, w, bias, multiplier, shift, y);
}
#endif
#if ATTN_WITH_S16
template <Isa kIsa>
void Out32Rows<kIsa>::logits_s16(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const int32_t* multiplier,
                                 const int32_t* shift, MatS32 y) {
  out32_rows<kIsa, Out32::kStore>(x, w, bias, multiplier, shift, y);
}
#endif

}  // namespace detail
}  // namespace attn
