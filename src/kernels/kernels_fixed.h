// kernels/kernels_fixed.h: the fixed-point kernel variants (kernels/kernel_table.h
// picks the one each op runs on this target). Variants do no checking: the public ops in
// attn/kernels_fixed.h and the fixed-point forwards validate once, before any
// hot loop. Every variant of an op is bit-exact with its `ref`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "attn/attention_fixed.h"
#include "attn/kernels_fixed.h"
#include "attn/tensor.h"
#include "kernels/arch.h"
#include "kernels/exp2_table.h"

namespace attn {
namespace detail {

// Int4 weights [rows, cols], cols even: element (r, c) is the low nibble (c
// even) or the high nibble (c odd) of byte c / 2 of row r, a 4-bit two's
// complement value in [-8, 7] (attn/FORMAT.md, "Int4 weights"). stride: bytes
// from one row to the next (cols / 2 for a whole matrix).
struct ConstMatS4 {
  const uint8_t* data = nullptr;
  int32_t rows = 0;
  int32_t cols = 0;
  int32_t stride = 0;

  ATTN_ALWAYS_INLINE const uint8_t* row(int32_t r) const { return data + static_cast<ptrdiff_t>(r) * stride; }
  ATTN_ALWAYS_INLINE ConstMatS4 rows_slice(int32_t r0, int32_t n) const {
    return ConstMatS4{row(r0), n, cols, stride};
  }
};
ATTN_ALWAYS_INLINE constexpr ConstMatS4 matrix_s4(const uint8_t* data, int32_t rows, int32_t cols) {
  return ConstMatS4{data, rows, cols, cols / 2};
}
// The two values of one byte: element 2i (low nibble) and 2i + 1 (high nibble).
ATTN_ALWAYS_INLINE constexpr int32_t s4_low(uint32_t b) {
  return static_cast<int32_t>(b & 7u) - static_cast<int32_t>(b & 8u);
}
ATTN_ALWAYS_INLINE constexpr int32_t s4_high(uint32_t b) { return s4_low(b >> 4); }

// Probabilities of the fused softmax are Q0.15 (32767 ~ 1.0). Chosen by
// measurement, see softmax_fused_s32_ref.cpp.
constexpr int kProbBits = 15;

// Constants of the fused softmax (attn::FusedSoftmaxParams carries them).
struct FusedSoftmax {
  uint32_t exp_multiplier;  // [2^31, 2^32): t = ((u << exp_shift) * exp_multiplier) >> 32
  int32_t exp_shift;        // [0, 31]
  int32_t diff_limit;       // [0, (2^32 - 1) >> exp_shift]; u above it: probability 0
};

// The converter's exponent: t = u * score_step * log2(e) in Q15.16 for a
// score u steps below the row's max; the converter makes diff_limit the
// largest u with t < 2^20 (16 octaves). The kernels' own exponent is the
// Q4.28 phase below (fused_exp_step, fused_exp).
ATTN_ALWAYS_INLINE constexpr uint32_t fused_exp_argument(uint32_t u, const FusedSoftmax& sm) {
  return static_cast<uint32_t>((static_cast<uint64_t>(u << sm.exp_shift) * sm.exp_multiplier) >> 32);
}

// The run-time exponent's step and limit: the phase t = u * step is
// u * score_step * log2(e) in Q4.28 (octave in bits 28..31, table index in
// bits 20..27), one 32-bit multiply per key (an MLS against the row max on
// a Cortex-M) where the Q15.16 argument above takes a 64-bit one and a shift:
//   step  = min(round(exp_multiplier * 2^(exp_shift - 20)), 2^32 - 1)  (>= 2^11)
//   limit = min(diff_limit, (2^32 - 1) / step)
// Keys with u <= limit have t < 2^32 (no wrap); the others get e = 0
// (the second term only ever cuts keys 16 octaves down, where e <= 1).
struct FusedExp {
  uint32_t step;
  int32_t limit;
};
ATTN_ALWAYS_INLINE constexpr FusedExp fused_exp_constants(const FusedSoftmax& sm) {
  // round(m 2^(sh - 20)) in 32-bit steps (no 64-bit shift on a 32-bit core):
  // for sh <= 19 the half-up rounding of m >> (20 - sh) is (m >> (19 - sh))
  // halved plus its low bit; m 2^(sh - 20) >= 2^32 for sh >= 21.
  const uint32_t m = sm.exp_multiplier;
  const int32_t sh = sm.exp_shift;
  const uint32_t half = sh <= 19 ? m >> (19 - sh) : 0;
  const uint32_t step = sh > 20 ? 0xFFFFFFFFu : sh == 20 ? m : (half >> 1) + (half & 1u);  // >= 2^11
  const uint32_t most = 0xFFFFFFFFu / step;
  const int32_t limit =
      static_cast<uint32_t>(sm.diff_limit) > most ? static_cast<int32_t>(most) : sm.diff_limit;
  return {step, limit};
}
constexpr int kExpPhaseIndexShift = 20;   // table index: bits [20, 28) of the phase
constexpr int kExpPhaseOctaveShift = 28;  // octave: bits [28, 32)

// The requantization of a fixed-point op's int32 (or int64) sums into its
// output: clamp(zero_point + MBQM(acc, multiplier, shift)) (s16: zero point
// 0 and the 64-bit requantize_s64). One struct, not three int32_t side by
// side, so that a call cannot swap them. (Not fast::Requant of
// kernels/requantize.h, the per-channel folded form the SIMD kernels use.)
struct Requant {
  int32_t multiplier;  // Q0.31, >= 0
  int32_t shift;       // [-31, 30] (s16: [-31, 14])
  int32_t zero_point;  // of the output; 0 for s16
};

// ---- portable scalar variants: always compiled, the oracle for the others ---
// Stand-alone ops (see attn/kernels_fixed.h for the arithmetic).
void linear_s8_ref(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y);
void linear_s16_ref(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const LinearS16Params& p, MatS16 y);
void softmax_s8_ref(ConstMatS8 x, const SoftmaxS8Params& p, MatS8 y);

// Fused attention internals.
// s[T, S] = round_half_up(sum_c (q[t, c] - zq) * (k[j, c] - zk) / 2^score_shift), int32 sum
// (|sum| < 2^30 for d < 2^14).
void scores_s8_ref(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t score_shift, MatS32 s);
// s[T, S] = round_half_up(sum_c q[t, c] * k[j, c] / 2^score_shift), int64 sum, int32 result.
void scores_s16_ref(ConstMatS16 q, ConstMatS16 k, int32_t score_shift, MatS32 s);
// One row: int32 scores row[begin, end) -> Q0.15 probabilities written as
// int16 over the first 2*n bytes of the same row (entry j at bytes [2j, 2j+2));
// entries outside [begin, end) (masked keys) become 0. 0 <= begin <= end <= n.
void softmax_fused_row_ref(int32_t* row, int32_t begin, int32_t end, int32_t n, const FusedSoftmax& sm);
// The fused softmax's normalizer for a row whose exps sum to `sum` (>= 65447,
// the largest exp): p_j = (e_j * recip + 2^31) >> 32 <= 32767.
uint32_t fused_softmax_reciprocal(uint32_t sum);
// Probability j of a row from its exp and the row's normalizer (Q0.15).
ATTN_ALWAYS_INLINE int32_t fused_prob(uint32_t e, uint32_t recip) {
  return static_cast<int32_t>((static_cast<uint64_t>(e) * recip + (uint64_t{1} << 31)) >> 32);
}
// The fused softmax's e_j for a key u = smax - s_j steps below the row's max
// (the scalar form every variant shares; see softmax_fused_s32_ref.cpp), with
// step and limit from fused_exp_constants: t = u * step (Q4.28),
// e = kExp2Table[(t >> 20) & 255] / 2^(t >> 28), rounded half up. Branch-free, so
// that a row costs the same on any data: the exp is worked out for every u
// (past the limit t may wrap mod 2^32: garbage) and cleared past the limit
// by the sign of limit - u (u < 2^31: scores are below 2^30 in magnitude).
ATTN_ALWAYS_INLINE uint32_t fused_exp(uint32_t u, uint32_t step, int32_t limit) {
  const uint32_t t = u * step;
  const uint32_t x = kExp2Table[(t >> kExpPhaseIndexShift) & ((1u << kExp2TableBits) - 1)];
  const uint32_t e = ((2 * x >> (t >> kExpPhaseOctaveShift)) + 1) >> 1;
  const uint32_t past = static_cast<uint32_t>((limit - static_cast<int32_t>(u)) >> 31);  // ~0 if u > limit
  return e & ~past;
}
// Store probability j as int16 at bytes [2j, 2j + 2) of the row, through
// memcpy: the row is an int32 array, and memcpy is the aliasing-safe way to
// reuse its storage as int16 (it compiles to one 16-bit store).
ATTN_ALWAYS_INLINE void store_fused_prob(int32_t* row, int32_t j, int32_t p) {
  const int16_t v = static_cast<int16_t>(p);
  std::memcpy(reinterpret_cast<unsigned char*>(row) + 2 * static_cast<ptrdiff_t>(j), &v, sizeof v);
}
// The fused softmax's first pass: e_j (int32) over s_j for j in [begin, end),
// 0 over the rest of [0, n); returns the row's normalizer (0 when begin >= end),
// so that fused_prob(e_j, recip) is softmax_fused_row's probability j.
uint32_t softmax_exps_row_ref(int32_t* row, int32_t begin, int32_t end, int32_t n, const FusedSoftmax& sm);
// o[t, c] = clamp(zo + MBQM(sum_j p[t, j] * (v[j, c] - zv), m, sh), -128, 127), int32 sum,
// with m, sh, zo the requant's multiplier, shift and zero point.
void weighted_sum_s8_ref(ConstMatS16 p, ConstMatS8 v, int32_t zv, const Requant& requant, MatS8 o);
// The same with V transposed, vt [d, S] (vt[c, j] = v[j, c], the arena layout
// of V where kValuesTransposedS8), and the probabilities given as the fused
// softmax's exps e [T, S] (softmax_exps_row) and per-row normalizers recip [T]:
// p[t, j] = fused_prob(e[t, j], recip[t]) (<= 32767: recip of the row's own exps).
void weighted_sum_vt_s8_ref(ConstMatS32 e, const uint32_t* recip, ConstMatS8 vt, int32_t zv,
                            const Requant& requant, MatS8 o);
// linear_s8 into the transposed output yt [N, M] (yt[n, m] = y[m, n]): V^T
// of forward_s8 where kValuesTransposedS8. Returns the channels written, N
// (a SIMD variant may write only the leading ones it takes; see _dsp).
int32_t linear_s8_t_ref(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 yt);
// o[t, c] = clamp(requantize_s64(sum_j p[t, j] * v[j, c], m, sh), -32768, 32767), int64 sum
// (m, sh: the requant's multiplier and shift; its zero point is 0).
void weighted_sum_s16_ref(ConstMatS16 p, ConstMatS16 v, const Requant& requant, MatS16 o);
// Rotary embedding in place. Row r of x [rows, heads * head_dim] sits at
// position pos0 + r (< t.positions); in every head the pair (i, i + head_dim/2)
// turns by the table's row: with a = x[i] - zp, b = x[i + head_dim/2] - zp,
//   x[i]              = clamp(zp + round((a cos - b sin) / 2^14))
//   x[i + head_dim/2] = clamp(zp + round((b cos + a sin) / 2^14))
// rounding half away from zero, clamped to the dtype (s16: zp = 0). Exact
// integers (int64 products), so any int16 table is safe.
void rope_s8_ref(MatS8 x, int32_t head_dim, int32_t zp, int32_t pos0, const RopeTable& t);
void rope_s16_ref(MatS16 x, int32_t head_dim, int32_t pos0, const RopeTable& t);

// ---- float <-> integer activations (attn::quantize_s8 / dequantize_s8 and
// the s16 pair in attn/kernels_fixed.h; src/kernels/ref/quantize_io_ref.cpp) --
//   quantize_DT:   q[i] = clamp(round_half_away(x[i] / scale) + zero_point), in double;
//                  +-infinity saturate, NaN gives the zero point
//   dequantize_DT: y[i] = scale * (q[i] - zero_point), rounded once to float
// scale finite and > 0, zero point in the dtype's range (the entries check).
#define ATTN_DECLARE_QUANTIZE_IO(isa)                                                             \
  void quantize_s8_##isa(const float* x, size_t n, float scale, int32_t zero_point, int8_t* q);   \
  void dequantize_s8_##isa(const int8_t* q, size_t n, float scale, int32_t zero_point, float* y); \
  void quantize_s16_##isa(const float* x, size_t n, float scale, int32_t zero_point, int16_t* q); \
  void dequantize_s16_##isa(const int16_t* q, size_t n, float scale, int32_t zero_point, float* y);
ATTN_DECLARE_QUANTIZE_IO(ref)
ATTN_DECLARE_QUANTIZE_IO(avx2)  // x86-64 AVX2
#undef ATTN_DECLARE_QUANTIZE_IO

// ---- SIMD variants (each compiled only where its ISA is: kernels/arch.h) --
// Same contracts and bit-exact results as the ref ones above.
#define ATTN_DECLARE_FIXED_VARIANTS(isa)                                                                   \
  void linear_s8_##isa(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y); \
  void linear_s16_##isa(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const LinearS16Params& p,        \
                        MatS16 y);                                                                         \
  void scores_s8_##isa(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t score_shift, MatS32 s); \
  void scores_s16_##isa(ConstMatS16 q, ConstMatS16 k, int32_t score_shift, MatS32 s);                      \
  void weighted_sum_s8_##isa(ConstMatS16 p, ConstMatS8 v, int32_t zv, const Requant& requant, MatS8 o);    \
  void weighted_sum_s16_##isa(ConstMatS16 p, ConstMatS16 v, const Requant& requant, MatS16 o);
ATTN_DECLARE_FIXED_VARIANTS(avx2)  // x86-64 AVX2
ATTN_DECLARE_FIXED_VARIANTS(neon)  // NEON, AArch64 (SDOT where the target has it) and ARMv7-A
#undef ATTN_DECLARE_FIXED_VARIANTS
// softmax_fused_row over rows [0, rows) of s (row stride `stride` int32), row r
// over its own keys [begin[r], end[r]), the rows' phases interleaved.
void softmax_fused_rows_avx2(int32_t* s, int32_t stride, int32_t rows, const int32_t* begin,
                             const int32_t* end, int32_t n, const FusedSoftmax& sm);
// NEON, AArch64 and ARMv7-A alike (ATTN_HAVE_NEON).
void softmax_fused_row_neon(int32_t* row, int32_t begin, int32_t end, int32_t n, const FusedSoftmax& sm);

// ---- x86-64 AVX-512 VNNI (ATTN_HAVE_AVX512VNNI): the int8 dot products ------
// vpdpbusd / vpdpwssd on 512-bit vectors, and the fused softmax on 16 lanes;
// s16 stays on the AVX2 kernels.
void linear_s8_avx512vnni(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y);
void scores_s8_avx512vnni(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t score_shift, MatS32 s);
// softmax_fused_row over rows [0, rows) of s (row stride `stride` int32), row r
// over its own keys [begin[r], end[r]), the rows' phases interleaved.
void softmax_fused_rows_avx512vnni(int32_t* s, int32_t stride, int32_t rows, const int32_t* begin,
                                   const int32_t* end, int32_t n, const FusedSoftmax& sm);
void weighted_sum_s8_avx512vnni(ConstMatS16 p, ConstMatS8 v, int32_t zv, const Requant& requant, MatS8 o);

// ---- Cortex-M DSP extension (ATTN_HAVE_DSP: M4, M7, M33), SMLAD ------------
void linear_s8_dsp(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y);
// linear_s8_t_ref for the leading channels its asm takes (a bias, K a
// multiple of 4 and <= 128, the full clamp, shifts in [-23, -2]): returns n0,
// the channels [0, n0) written; the caller computes the rest.
int32_t linear_s8_t_dsp(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 yt);
void scores_s8_dsp(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t score_shift, MatS32 s);
void weighted_sum_s8_dsp(ConstMatS16 p, ConstMatS8 v, int32_t zv, const Requant& requant, MatS8 o);
void weighted_sum_vt_s8_dsp(ConstMatS32 e, const uint32_t* recip, ConstMatS8 vt, int32_t zv,
                            const Requant& requant, MatS8 o);
uint32_t softmax_exps_row_dsp(int32_t* row, int32_t begin, int32_t end, int32_t n, const FusedSoftmax& sm);
void softmax_fused_row_dsp(int32_t* row, int32_t begin, int32_t end, int32_t n, const FusedSoftmax& sm);
// s16 (SMLAD / SMLALD; same contracts and bits as the refs).
void linear_s16_dsp(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const LinearS16Params& p, MatS16 y);
void scores_s16_dsp(ConstMatS16 q, ConstMatS16 k, int32_t score_shift, MatS32 s);
void weighted_sum_s16_dsp(ConstMatS16 p, ConstMatS16 v, const Requant& requant, MatS16 o);

// ---- Cortex-M55 Helium (ATTN_HAVE_MVE) ----------------------------------------
void linear_s8_mve(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y);
void scores_s8_mve(ConstMatS8 q, int32_t zq, ConstMatS8 k, int32_t zk, int32_t score_shift, MatS32 s);
void weighted_sum_s8_mve(ConstMatS16 p, ConstMatS8 v, int32_t zv, const Requant& requant, MatS8 o);
void softmax_fused_row_mve(int32_t* row, int32_t begin, int32_t end, int32_t n, const FusedSoftmax& sm);
// softmax_fused_row_mve over rows [0, rows) of s (row stride `stride` int32), row r over [begin[r], end[r]).
void softmax_fused_rows_mve(int32_t* s, int32_t stride, int32_t rows, const int32_t* begin,
                            const int32_t* end, int32_t n, const FusedSoftmax& sm);
// s16 (VMLADAVA / VMLALDAVA; same contracts and bits as the refs).
void linear_s16_mve(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const LinearS16Params& p, MatS16 y);
void scores_s16_mve(ConstMatS16 q, ConstMatS16 k, int32_t score_shift, MatS32 s);
void weighted_sum_s16_mve(ConstMatS16 p, ConstMatS16 v, const Requant& requant, MatS16 o);

}  // namespace detail
}  // namespace attn
