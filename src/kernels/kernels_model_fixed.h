// kernels/kernels_model_fixed.h: the integer kernels of whole models
// (attn/transformer_fixed.h) besides the attention block's: norms, the
// activation tables, the residual stream's rescales and the LM head.
// Registered in kernels/kernel_table.h. No checks: the
// forwards validate the constants once (transformer_fixed.cpp).
#pragma once

#include <cstdint>

#include "attn/kernels_fixed.h"
#include "attn/transformer.h"
#include "attn/transformer_fixed.h"
#include "kernels/arch.h"
#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"

namespace attn {
namespace detail {

// round(v * m * 2^(shift - 31)), ties away from zero, in int64: |v| < 2^31,
// m in [0, 2^31), shift in [-31, 30] (so the product stays below 2^62).
ATTN_ALWAYS_INLINE constexpr int64_t rescale_q31(int64_t v, int32_t m, int32_t shift) {
  return fp::rounding_divide_by_pot_s64(v * m, 31 - shift);
}
ATTN_ALWAYS_INLINE constexpr int32_t saturate_s32(int64_t v) {
  return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : static_cast<int32_t>(v);
}
// The 16x8 requantization (fp::requantize_s64) without its int32 narrowing:
// round(acc * reduce_multiplier_q15(m) * 2^(shift - 15)), saturated to int32;
// shift in [-31, 14], |acc| < 2^47.
ATTN_ALWAYS_INLINE constexpr int32_t rescale_q15_s64(int64_t acc, int32_t m, int32_t shift) {
  return saturate_s32(fp::rounding_divide_by_pot_s64(acc * fp::reduce_multiplier_q15(m), 15 - shift));
}
// A linear's accumulator on the output grid, by the accumulator's type:
// s8's int32 sums with the Q31 multiplier, s16's int64 sums with its Q0.15
// reduction (saturated to int32).
ATTN_ALWAYS_INLINE constexpr int64_t rescale_acc(int32_t acc, int32_t m, int32_t shift) {
  return rescale_q31(acc, m, shift);
}
ATTN_ALWAYS_INLINE constexpr int64_t rescale_acc(int64_t acc, int32_t m, int32_t shift) {
  return rescale_q15_s64(acc, m, shift);
}

// The epilogue of the int32-output linears: the accumulator of row m,
// channel c rescaled (rescale_acc) and added to the int32 residual (W2) or
// stored as a logit (the LM head), saturated either way.
enum class Out32 { kAddToResidual, kStore };
template <Out32 kOut>
struct RescaleInto {
  const int32_t* multiplier;
  const int32_t* shift;
  MatS32 y;
  template <class Acc>
  ATTN_ALWAYS_INLINE void operator()(int32_t m, int32_t c, Acc acc) const {
    int32_t* o = y.row(m) + c;
    const int64_t v = rescale_acc(acc, multiplier[c], shift[c]);
    *o = saturate_s32(kOut == Out32::kAddToResidual ? int64_t{*o} + v : v);
  }
};

// The portable sums of the whole-model linears (W2 into the residual, the LM
// head): for each row m of x and row c of w, acc = bias[c] (0 without) +
// sum x w in Acc (int32 for s8, int64 for s16), handed to epilogue(m, c, acc).
template <class Act, class Acc, class Epilogue>
void dot_rows_ref(Matrix<const Act> x, ConstMatS8 w, const Acc* bias, Epilogue epilogue) {
  for (int32_t m = 0; m < x.rows; ++m) {
    const Act* xr = x.row(m);
    for (int32_t c = 0; c < w.rows; ++c) {
      const int8_t* wr = w.row(c);
      Acc acc = bias != nullptr ? bias[c] : 0;
      for (int32_t k = 0; k < x.cols; ++k) acc += int32_t{xr[k]} * int32_t{wr[k]};
      epilogue(m, c, acc);
    }
  }
}

// ---- 32-bit steps (the norms and the residual rescales; one instruction each
// on the DSP / Helium / NEON targets) ---------------------------------------------
// round(v / 2^s), half up (floor(v / 2^s + 1/2)), s in [0, 31]: exact for any
// int32 v (SRSHR, VRSHL by -s).
ATTN_ALWAYS_INLINE constexpr int32_t rshift_round32(int32_t v, int32_t s) {
  return s == 0 ? v : static_cast<int32_t>((v >> s) + ((v >> (s - 1)) & 1));
}
// v * 2^s for s >= 0 (|v| < 2^(31 - s): the callers' ranges), round(v / 2^-s)
// for s in [-31, -1] (VRSHL by a signed register).
ATTN_ALWAYS_INLINE constexpr int32_t shift_round32(int32_t v, int32_t s) {
  return s >= 0 ? static_cast<int32_t>(static_cast<uint32_t>(v) << s) : rshift_round32(v, -s);
}
// round(v / 2^s) for s >= 1 (0 from s = 32 on), sat32(v * 2^-s) for s in [-31, 0]
// (VQRSHL by -s).
ATTN_ALWAYS_INLINE constexpr int32_t shift_round_sat32(int32_t v, int32_t s) {
  return s >= 32 ? 0
         : s > 0 ? rshift_round32(v, s)
                 : saturate_s32(static_cast<int64_t>(v) * (int64_t{1} << -s));
}
// round(a b / 2^32), half up: SMMULR, VRMULH. Exact for any int32 a, b.
ATTN_ALWAYS_INLINE constexpr int32_t mulhi_round32(int32_t a, int32_t b) {
  return static_cast<int32_t>((static_cast<int64_t>(a) * b + (int64_t{1} << 31)) >> 32);
}
// round(a b / 2^31), half up: SQRDMULH / VQRDMULH (no saturation: a > INT32_MIN
// here), and SMMULR(2a, b) where |a| <= 2^30.
ATTN_ALWAYS_INLINE constexpr int32_t mulhi_round_q31(int32_t a, int32_t b) {
  return static_cast<int32_t>((static_cast<int64_t>(a) * b + (int64_t{1} << 30)) >> 31);
}
ATTN_ALWAYS_INLINE constexpr int32_t saturating_sub32(int32_t a, int32_t b) {
  return saturate_s32(int64_t{a} - b);
}

// The residual stream's rescales (RescaleFixed, 32-bit):
//   to an activation:  q = clamp(zp + shift_round_sat32(mulhi_round32(r, m), -1 - sh))
//   to the residual:   r = sat32(r + shift_round_sat32(mulhi_round32((q - zp) 2^L, m), L - 1 - sh))
// with L = kResidualAddPreShift<Act> (|q - zp| 2^L <= 2^30).
ATTN_ALWAYS_INLINE constexpr int32_t rescale_to_act32(int32_t r, int32_t m, int32_t sh) {
  return shift_round_sat32(mulhi_round32(r, m), -1 - sh);
}
ATTN_ALWAYS_INLINE constexpr int32_t rescale_to_residual32(int32_t v_shifted, int32_t m, int32_t sh,
                                                           int32_t pre) {
  return shift_round_sat32(mulhi_round32(v_shifted, m), pre - 1 - sh);
}
// A constant expression: clang-tidy's dynamic-initialization check misreads variable templates.
template <typename Act>
// NOLINTNEXTLINE(bugprone-dynamic-static-initializers)
constexpr int32_t kResidualAddPreShift = sizeof(Act) == 1 ? 22 : 14;

// One element of each, the ref's loops and the SIMD variants' last columns:
// the residual x plus the activation y, and x to an activation before its clamp.
template <typename Act>
ATTN_ALWAYS_INLINE int32_t residual_add_element(int32_t x, Act y, const RescaleFixed& r) {
  constexpr int32_t kPre = kResidualAddPreShift<Act>;
  const int32_t v = (int32_t{y} - r.zero_point) * (int32_t{1} << kPre);
  return saturate_s32(int64_t{x} + rescale_to_residual32(v, r.multiplier, r.shift, kPre));
}
ATTN_ALWAYS_INLINE int64_t residual_to_act_element(int32_t x, const RescaleFixed& r) {
  return int64_t{r.zero_point} + rescale_to_act32(x, r.multiplier, r.shift);
}

// floor(sqrt(v)), exact, for any v < 2^64. Where the CPU has a double
// square root instruction (x86-64, AArch64): the double's root (within 1 of
// the exact one: v rounds to 53 bits, the root keeps 52 of its at most 32
// integer bits), corrected by r^2 <= v < (r + 1)^2; a norm's row then costs
// a few instructions, not the bit loop's 31 hard-to-predict branches.
// Elsewhere (no double FPU on a Cortex-M): bit by bit. The same value either way.
ATTN_ALWAYS_INLINE uint64_t isqrt_u64(uint64_t v) {
#if ATTN_X86_64 || defined(__aarch64__)
  constexpr uint64_t kMax = 0xFFFFFFFFu;  // floor(sqrt(2^64 - 1))
  uint64_t r = static_cast<uint64_t>(__builtin_sqrt(static_cast<double>(v)));
  if (r > kMax) r = kMax;
  while (r * r > v) --r;
  while (r < kMax && (r + 1) * (r + 1) <= v) ++r;
  return r;
#else
  uint64_t r = 0;
  uint64_t bit = uint64_t{1} << 62;
  while (bit > v) bit >>= 2;
  while (bit != 0) {
    if (v >= r + bit) {
      v -= r + bit;
      r = (r >> 1) + bit;
    } else {
      r >>= 1;
    }
    bit >>= 2;
  }
  return r;
#endif
}

// ---- norms (src/kernels/ref/norm_fixed_ref.cpp) ------------------------------
// The per-row steps every variant shares (NormFixed's arithmetic); the
// variants differ only in how they run the three passes over the row:
//   1. LayerNorm: sum (int64) -> mean = norm_mean(sum, E); RMSNorm: mean = 0
//   2. b = bits(max |d|), d = saturating_sub32(x, mean); k = norm_reduce_shift(b)
//   3. sq = sum rshift_round32(d, k)^2 (uint64); R = norm_multiplier(...)
//   4. per element: y = norm_element(d, 29 - b, R, w_i, bias_i, shift), then + zp, clamp.
ATTN_ALWAYS_INLINE constexpr int32_t norm_mean(int64_t sum, int32_t E) {
  return static_cast<int32_t>((sum >= 0 ? sum + E / 2 : sum - E / 2) / E);  // half away from zero
}
ATTN_ALWAYS_INLINE constexpr int32_t bit_length_u32(uint32_t v) { return 32 - fp::count_leading_zeros(v); }
ATTN_ALWAYS_INLINE constexpr int32_t norm_reduce_shift(int32_t b) { return b > 23 ? b - 23 : 0; }
// R = round(2^(F + 2 + b - k + j) / s) with v = round(sq / E) + round(eps / 4^k)
// (at least 1) = m 4^-j, m in [2^60, 2^62), s = floor(sqrt(m)): then
// n = round(u R / 2^31) (u = d 2^(29 - b)) is d / sqrt(variance + eps) in Q.F.
// 0 for an all-zero row (b = 0). R < 2^30 for every row (2^(F + 3) sqrt(E) <= 2^29).
// static: the baseline and the AVX2 / AVX-512 files each keep their own copy
// (one weak symbol for two ISAs could hand baseline code the AVX2 one).
static inline int32_t norm_multiplier(uint64_t sq, int32_t E, int64_t eps, int32_t b, int32_t k) {
  if (b == 0) return 0;
  const uint64_t e = static_cast<uint64_t>(E);
  uint64_t v = (sq + e / 2) / e;
  v += k > 0 ? static_cast<uint64_t>((eps + (int64_t{1} << (2 * k - 1))) >> (2 * k))
             : static_cast<uint64_t>(eps);
  if (v == 0) v = 1;
  const uint32_t v_hi = static_cast<uint32_t>(v >> 32);  // bit length - 1, [0, 62]:
  const int32_t top =
      v_hi != 0 ? 63 - fp::count_leading_zeros(v_hi) : 31 - fp::count_leading_zeros(static_cast<uint32_t>(v));
  const int32_t j = top <= 61 ? (61 - top) / 2 : -1;
  const uint64_t m = j >= 0 ? v << (2 * j) : v >> 2;
  const uint64_t s = isqrt_u64(m);  // [2^30, 2^31)
  const int32_t X = norm_frac_bits(E) + 2 + b - k + j;
  if (X > 62) return INT32_MAX;  // not reached (X <= 61 for E <= ATTN_MAX_DIM)
  const uint64_t R = ((uint64_t{1} << X) + s / 2) / s;
  return R > static_cast<uint64_t>(INT32_MAX) ? INT32_MAX : static_cast<int32_t>(R);
}
// One output before its zero point: |n| <= 2^29 (|u| <= 2^29, R < 2^31), |p| <= 2^29,
// |p + bias| < 2^30.
ATTN_ALWAYS_INLINE constexpr int32_t norm_element(int32_t d, int32_t u_shift, int32_t R, int32_t w,
                                                  int32_t bias, int32_t shift) {
  const int32_t u = shift_round32(d, u_shift);
  const int32_t n = mulhi_round_q31(u, R);
  return shift_round_sat32(mulhi_round_q31(n, w) + bias, shift);
}

// The ref's scalar passes over elements [i0, E) of one row x: the whole row
// in the ref (i0 = 0), the last elements in the SIMD variants (i0 = where
// their vectors end). Each carries the vector part's partial result on.
ATTN_ALWAYS_INLINE int64_t norm_sum_from(const int32_t* x, int32_t i0, int32_t E, int64_t sum) {
  for (int32_t i = i0; i < E; ++i) sum += x[i];
  return sum;
}
ATTN_ALWAYS_INLINE uint32_t norm_max_abs_from(const int32_t* x, int32_t i0, int32_t E, int32_t mean,
                                              uint32_t max_abs) {
  for (int32_t i = i0; i < E; ++i) {
    const int32_t d = saturating_sub32(x[i], mean);
    const uint32_t a = d < 0 ? 0u - static_cast<uint32_t>(d) : static_cast<uint32_t>(d);
    max_abs = a > max_abs ? a : max_abs;
  }
  return max_abs;
}
ATTN_ALWAYS_INLINE uint64_t norm_sq_from(const int32_t* x, int32_t i0, int32_t E, int32_t mean, int32_t k,
                                         uint64_t sq) {
  for (int32_t i = i0; i < E; ++i) {
    const int32_t d = rshift_round32(saturating_sub32(x[i], mean), k);
    sq += static_cast<uint64_t>(int64_t{d} * d);
  }
  return sq;
}
// Outputs [i0, E): norm_element, + zp, clamped to [lo, hi].
template <typename Out>
ATTN_ALWAYS_INLINE void norm_store_from(const int32_t* x, int32_t i0, int32_t E, int32_t mean,
                                        int32_t u_shift, int32_t R, const NormFixed& p, int32_t lo,
                                        int32_t hi, Out* y) {
  for (int32_t i = i0; i < E; ++i) {
    const int32_t v = norm_element(saturating_sub32(x[i], mean), u_shift, R, p.weight[i],
                                   p.bias != nullptr ? p.bias[i] : 0, p.shift);
    const int64_t out = int64_t{p.output_zero_point} + v;
    y[i] = static_cast<Out>(out < lo ? lo : out > hi ? hi : out);
  }
}

// ---- one loop per op, every variant (kernels/model_fixed_rows.h) ----------
// The norms, the residual rescales and the int32-output linears run the same
// row loops on every ISA; only the passes over one row differ. Each
// variant's file specializes the op's passes for its Isa (NormOps,
// ResidualOps, Out32DotOps) and instantiates the op's struct below, whose
// static functions are the kernel table's rows (NormRows<Isa::kAvx2>::s8).
enum class Isa { kRef, kDsp, kMve, kAvx2, kNeon };

// Row r of y = the norm of row r of x (int32 residual rows), NormFixed's
// arithmetic; y may be x (int32 output) for an in-place norm.
template <Isa kIsa>
struct NormRows {
#if ATTN_WITH_S8
  static void s8(ConstMatS32 x, NormKind kind, const NormFixed& p, MatS8 y);
#endif
#if ATTN_WITH_S16
  static void s16(ConstMatS32 x, NormKind kind, const NormFixed& p, MatS16 y);
#endif
  static void s32(ConstMatS32 x, NormKind kind, const NormFixed& p, MatS32 y);
};
template <Isa kIsa>
struct NormOps;

// ---- activations (src/kernels/ref/activation_fixed_ref.cpp) --------------
// In place over h1 [rows, F]: FfnS8 / FfnS16's arithmetic.
void act_table_s8_ref(MatS8 h1, const int8_t* table);
void act_gate_s8_ref(MatS8 h1, ConstMatS8 h3, const int16_t* table, int32_t h3_zero_point, int32_t multiplier,
                     int32_t shift, int32_t g_zero_point);
#if ATTN_HAVE_MVE
// src/kernels/mve/activation_fixed_mve.cpp
void act_table_s8_mve(MatS8 h1, const int8_t* table);
void act_gate_s8_mve(MatS8 h1, ConstMatS8 h3, const int16_t* table, int32_t h3_zero_point, int32_t multiplier,
                     int32_t shift, int32_t g_zero_point);
#endif
void act_table_s16_ref(MatS16 h1, const int32_t* table, int32_t multiplier, int32_t shift);
void act_gate_s16_ref(MatS16 h1, ConstMatS16 h3, const int32_t* table, int32_t multiplier, int32_t shift);
#if ATTN_WITH_S8
// x86-64 AVX2 (ATTN_HAVE_AVX2): x86/activation_fixed_avx2.cpp.
void act_table_s8_avx2(MatS8 h1, const int8_t* table);
void act_gate_s8_avx2(MatS8 h1, ConstMatS8 h3, const int16_t* table, int32_t h3_zero_point,
                      int32_t multiplier, int32_t shift, int32_t g_zero_point);
#endif

// ---- residual stream (src/kernels/ref/residual_fixed_ref.cpp) -------------
// add: x = sat32(x + round((y - zp) * ratio)), RescaleFixed's "to the residual".
// to:  y = clamp(zp + round(x * ratio)), RescaleFixed's "to an activation".
template <Isa kIsa>
struct ResidualRows {
#if ATTN_WITH_S8
  static void add_s8(MatS32 x, ConstMatS8 y, const RescaleFixed& r);
  static void to_s8(ConstMatS32 x, const RescaleFixed& r, MatS8 y);
#endif
#if ATTN_WITH_S16
  static void add_s16(MatS32 x, ConstMatS16 y, const RescaleFixed& r);
  static void to_s16(ConstMatS32 x, const RescaleFixed& r, MatS16 y);
#endif
};
template <Isa kIsa>
struct ResidualOps;

// ---- W2 into the residual, the LM head (src/kernels/*/linear_residual_logits_*.cpp)
// The SIMD rows share one contract, each ISA's dot_rows (dsp/dot_rows_s8_dsp.h,
// mve/dot_rows_s8_mve.h, x86/dot_rows_avx2.h, neon/dot_rows_neon.h):
//   acc[m, n] = bias[n] + sum_k x[m, k] w[n, k]   (int32, bias null: 0)
// handed to out(m, n, acc), the kernel's epilogue (RescaleInto). The sums are
// ref's int32 sums: the same products, added in another order in wrapping
// int32 arithmetic, so the result is ref's (whose own sum is in range: the
// converter's bias bound). No zero point: the model kernels carry it in the
// bias. AVX2 and NEON also have the int16 x int8 rows of the s16 kernels
// (dot_rows_s16: int64 sums, exact, as ref's); DSP and Helium take int16
// rows (not in the table) and DSP K > dsp::kDotRowsMaxK through the ref's sums.
template <Isa kIsa>
struct Out32Rows {
  // r [M, N] = sat32(r + rescale of x [M, K] w^T), w [N, K] int8: FfnS8 / FfnS16's w2.
#if ATTN_WITH_S8
  static void linear_residual_s8(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                                 const int32_t* shift, MatS32 r);
#endif
#if ATTN_WITH_S16
  static void linear_residual_s16(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const int32_t* multiplier,
                                  const int32_t* shift, MatS32 r);
#endif
  // y [M, V] int32 logits = rescale of x [M, E] w^T (w [V, E] int8), see
  // TransformerWeightsFixed::head.
#if ATTN_WITH_S8
  static void logits_s8(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                        const int32_t* shift, MatS32 y);
#endif
#if ATTN_WITH_S16
  static void logits_s16(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const int32_t* multiplier,
                         const int32_t* shift, MatS32 y);
#endif
};
template <Isa kIsa>
struct Out32DotOps;
#if ATTN_WITH_S8
// x86-64 AVX-512 VNNI (ATTN_HAVE_AVX512VNNI): the int8 rows on vpdpbusd panels
// (x86/linear_residual_logits_s8_avx512vnni.cpp), the AVX2 rows below 4 rows of x.
void linear_residual_s8_avx512vnni(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                                   const int32_t* shift, MatS32 r);
void logits_s8_avx512vnni(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const int32_t* multiplier,
                          const int32_t* shift, MatS32 y);
#endif

// ---- int4 weights (src/kernels/*/linear_s4_*.cpp, kernels/s4_rows.h) ------
// The linears of a model whose projection has int4 weights (ProjectionS8 /
// ProjectionS16::weight_s4): the same arithmetic as with int8 weights holding
// the same values, so each is bit-exact with its int8-weight counterpart on
// the unpacked weights. Each ISA gives one S4DotOps<kIsa>::rows:
//   acc[m, n] = bias[n] + sum_k x[m, k] w[n, k]   (int32 for int8 x, int64 for int16 x)
// handed to an epilogue (the requantization to int8 / int16, or RescaleInto).
// No input zero point: the models fold it into the bias (linear_s8's
// p.input_zero_point is 0 here).
template <Isa kIsa>
struct S4Rows {
#if ATTN_WITH_S8
  static void linear_s8(ConstMatS8 x, ConstMatS4 w, const int32_t* bias, const LinearS8Params& p, MatS8 y);
  static void linear_residual_s8(ConstMatS8 x, ConstMatS4 w, const int32_t* bias, const int32_t* multiplier,
                                 const int32_t* shift, MatS32 r);
  static void logits_s8(ConstMatS8 x, ConstMatS4 w, const int32_t* bias, const int32_t* multiplier,
                        const int32_t* shift, MatS32 y);
#endif
#if ATTN_WITH_S16
  static void linear_s16(ConstMatS16 x, ConstMatS4 w, const int64_t* bias, const LinearS16Params& p,
                         MatS16 y);
  static void linear_residual_s16(ConstMatS16 x, ConstMatS4 w, const int64_t* bias, const int32_t* multiplier,
                                  const int32_t* shift, MatS32 r);
  static void logits_s16(ConstMatS16 x, ConstMatS4 w, const int64_t* bias, const int32_t* multiplier,
                         const int32_t* shift, MatS32 y);
#endif
};
template <Isa kIsa>
struct S4DotOps;

// The portable sums over int4 weights (the ref's rows, and the SIMD rows' tails).
template <class Act, class Acc, class Epilogue>
void dot_rows_s4_ref(Matrix<const Act> x, ConstMatS4 w, const Acc* bias, Epilogue epilogue) {
  for (int32_t m = 0; m < x.rows; ++m) {
    const Act* xr = x.row(m);  // [K]
    for (int32_t c = 0; c < w.rows; ++c) {
      const uint8_t* wr = w.row(c);  // [K / 2]
      Acc acc = bias != nullptr ? bias[c] : 0;
      for (int32_t k = 0; k < x.cols; k += 2) {
        acc += int32_t{xr[k]} * s4_low(wr[k / 2]) + int32_t{xr[k + 1]} * s4_high(wr[k / 2]);
      }
      epilogue(m, c, acc);
    }
  }
}

}  // namespace detail
}  // namespace attn
