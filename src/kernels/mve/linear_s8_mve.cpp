// linear, int8, Cortex-M55 Helium (MVE): y = requant(x W^T + b), 16 int8
// MACs per VMLADAVA, bit-exact with linear_s8_ref (same int32 sums, same
// requantization: kernels/mve/mve_requantize.h).
//
// - K <= 64 (the MCU shapes): the x rows stay in registers (K / 16 vectors a
//   row, zero-filled past K; 4 rows for K <= 16, 2 for K <= 32, 1 for
//   K <= 48; for K <= 64 two rows with their last chunk in a stack copy) and
//   the inner loop walks the weight rows: per output channel only the weight
//   loads, the VMLADAVAs and one store of each row's sum. Weight loads are
//   whole vectors (x is zero past K) while they stay inside W's span; the
//   last row or so loads its last chunk tail-predicated (VCTP). The
//   whole-load channel loops of the two-row cases (K <= 32, K <= 64) are asm
//   low-overhead loops, so that GCC 12 and clang-14 run the same code.
// - K <= kMaxK: blocks of 4 x rows by 1 weight row; the 4 rows are first
//   copied, interleaved and zero-padded, to a stack buffer walked by one
//   pointer (loop: 1 weight load, 4 x loads, 4 VMLADAVA).
// - larger K: 4 x 1 blocks with tail-predicated loads of both operands.
//
// The sums of a row go to a stack array; the row is then requantized 4
// channels per vector (per-lane multiplier and shift) and stored as 4
// contiguous bytes. The input zero point is applied as -zp * sum_k w[n, k].
#include "kernels/arch.h"

#if ATTN_HAVE_MVE
#include <arm_mve.h>

#include "kernels/kernels_fixed.h"

namespace attn {
namespace detail {
namespace {

constexpr int32_t kGroup = 64;  // output channels per pass (stack: 4 x 64 int32 sums)
constexpr int32_t kMaxK = 256;  // columns of x held in the stack buffer (4 rows: 1 KiB)

// y[m + r][n0 + j] = requant(acc[r][j] + bias[n0 + j] - zp * wsum[j]) for
// r < rows, j < nc: four channels per vector, their parameters loaded once
// for all rows. Per lane the arithmetic of mve::requantize: a left shift
// (shift > 0; skipped when no channel has one) before VQRDMULH, a rounding
// right shift (shift < 0, VRSHL by the negative count) after it, on v - 1
// for negative v: (v & count) >> 31 is -1 exactly where both are negative;
// where every channel's shift is negative, (v >> 31) alone (no mask).
enum class ShiftKind {
  kMixed,  // no shift > 0, some shift 0
  kLeft,   // some shift > 0
  kRight,  // every shift < 0
};

// A group's requantization constants as locals (read once: the int8
// stores could alias p, and both compilers reloaded its fields for every
// four channels).
struct RequantGroup {
  const int32_t* bias;   // [nc] at channel n0, or null
  const int32_t* wsum;   // [nc], or null (input zero point 0)
  const int32_t* shift;  // [nc]
  const int32_t* mult;   // [nc]
  int32_t zp, zo;
  int32x4_t act_min, act_max;
};

// Channels j .. j + 3 of rows [0, rows): whole vectors (kWhole) load their
// parameters unpredicated (GCC 12 wraps every predicated load in its own
// VPST and moves the predicate through a core register), the last 1..3
// channels predicated.
template <ShiftKind kShifts, bool kWhole>
inline void requantize_four(const int32_t (*acc)[kGroup], int32_t rows, const RequantGroup& g, int32_t j,
                            int32_t nc, int8_t* o, int32_t stride) {
  const int32x4_t zero = vdupq_n_s32(0);
  const mve_pred16_t live = vctp32q(static_cast<uint32_t>(nc - j));
  int32x4_t base = zero;
  if (g.bias != nullptr) base = kWhole ? vldrwq_s32(g.bias + j) : vldrwq_z_s32(g.bias + j, live);
  if (g.wsum != nullptr) base = vsubq_s32(base, vmulq_n_s32(vldrwq_s32(g.wsum + j), g.zp));
  const int32x4_t shift = kWhole ? vldrwq_s32(g.shift + j) : vldrwq_z_s32(g.shift + j, live);
  const int32x4_t mult = kWhole ? vldrwq_s32(g.mult + j) : vldrwq_z_s32(g.mult + j, live);
  const int32x4_t left = vmaxq_s32(shift, zero);
  const int32x4_t right = vminq_s32(shift, zero);  // a negative count: rounding right shift
  for (int32_t r = 0; r < rows; ++r, o += stride) {
    int32x4_t v = vaddq_s32(vldrwq_s32(acc[r] + j), base);
    if (kShifts == ShiftKind::kLeft) v = vshlq_s32(v, left);
    v = vqrdmulhq_s32(v, mult);
    const int32x4_t neg = kShifts == ShiftKind::kRight ? v : vandq_s32(v, right);  // < 0: v - 1
    v = vrshlq_s32(vaddq_s32(v, vshrq_n_s32(neg, 31)), right);
    v = vminq_s32(vmaxq_s32(vaddq_n_s32(v, g.zo), g.act_min), g.act_max);
    if (kWhole) {
      vstrbq_s32(o, v);  // 4 int8, truncating
    } else {
      vstrbq_p_s32(o, v, live);
    }
  }
}

template <ShiftKind kShifts>
void requantize_rows(const int32_t (*acc)[kGroup], int32_t rows, const int32_t* wsum, int32_t nc,
                     const int32_t* bias, const LinearS8Params& p, int32_t n0, MatS8 y, int32_t m) {
  const RequantGroup g{bias != nullptr ? bias + n0 : nullptr,
                       wsum,
                       p.shift + n0,
                       p.multiplier + n0,
                       p.input_zero_point,
                       p.output_zero_point,
                       vdupq_n_s32(p.act_min),
                       vdupq_n_s32(p.act_max)};
  int8_t* const out = y.row(m) + n0;  // [rows, nc] at y.stride
  const int32_t stride = y.stride;
  const int32_t whole = nc & ~3;
  ATTN_NO_UNROLL
  for (int32_t j = 0; j < whole; j += 4) requantize_four<kShifts, true>(acc, rows, g, j, nc, out + j, stride);
  if (whole < nc) requantize_four<kShifts, false>(acc, rows, g, whole, nc, out + whole, stride);
}

void requantize_rows(const int32_t (*acc)[kGroup], int32_t rows, const int32_t* wsum, int32_t nc,
                     const int32_t* bias, const LinearS8Params& p, int32_t n0, MatS8 y, int32_t m,
                     ShiftKind shifts) {
  if (shifts == ShiftKind::kLeft) {
    requantize_rows<ShiftKind::kLeft>(acc, rows, wsum, nc, bias, p, n0, y, m);
  } else if (shifts == ShiftKind::kRight) {
    requantize_rows<ShiftKind::kRight>(acc, rows, wsum, nc, bias, p, n0, y, m);
  } else {
    requantize_rows<ShiftKind::kMixed>(acc, rows, wsum, nc, bias, p, n0, y, m);
  }
}

// wsum[j] = sum_k w[n0 + j, k] for j < nc (only when the input zero point is not 0).
void weight_sums(ConstMatS8 w, int32_t n0, int32_t nc, int32_t* wsum) {
  for (int32_t j = 0; j < nc; ++j) {
    const int8_t* b = w.row(n0 + j);  // [K]
    int32_t s = 0;
    for (int32_t k = 0; k < w.cols; k += 16) {
      const mve_pred16_t pred = vctp8q(static_cast<uint32_t>(w.cols - k));
      s = vaddvaq_p_s8(s, vldrbq_z_s8(b + k, pred), pred);
    }
    wsum[j] = s;
  }
}

// sums_held<2, 2>'s channel pairs (j, j + 1) for j < 2 n, whole weight
// loads, in asm (both compilers alike): x chunks 0..1 of rows 0 and 1 in
// four q registers, per pair 4 weight loads, 8 VMLADAV(A) into four even
// core registers, the two weight pointers' steps and 2 STRD (acc[1][j] at
// acc[0][j] + kGroup) in a low-overhead loop: 17 instructions a pair. The
// sums in r0, r2, r8, r10: with r4 and r6, inlined into linear_s8_mve, GCC
// 12 rejects the asm ("impossible constraints").
inline void held_k32_asm(const int8x16_t (&xv)[2][2], const int8_t*& b, int32_t stride, int32_t n,
                         int32_t* out) {
  static_assert(kGroup == 64, "the asm stores acc[1][j] at acc[0][j] + 256 bytes");
  if (n <= 0) return;
  register int32_t s0 __asm__("r0"), s1 __asm__("r2"), s2 __asm__("r8"), s3 __asm__("r10");
  const int8_t* b2 = b + stride;
  const int32_t step = 2 * stride;
  int8x16_t wv;
  __asm__ volatile(
      "dls lr, %[n]\n"
      "1:\n"
      "vldrb.u8 %q[wv], [%[b]]\n"
      "vmladav.s8 %[s0], %q[x00], %q[wv]\n"
      "vmladav.s8 %[s1], %q[x10], %q[wv]\n"
      "vldrb.u8 %q[wv], [%[b], #16]\n"
      "add %[b], %[b], %[step]\n"
      "vmladava.s8 %[s0], %q[x01], %q[wv]\n"
      "vmladava.s8 %[s1], %q[x11], %q[wv]\n"
      "vldrb.u8 %q[wv], [%[b2]]\n"
      "vmladav.s8 %[s2], %q[x00], %q[wv]\n"
      "vmladav.s8 %[s3], %q[x10], %q[wv]\n"
      "vldrb.u8 %q[wv], [%[b2], #16]\n"
      "add %[b2], %[b2], %[step]\n"
      "vmladava.s8 %[s2], %q[x01], %q[wv]\n"
      "vmladava.s8 %[s3], %q[x11], %q[wv]\n"
      "strd %[s1], %[s3], [%[out], #256]\n"
      "strd %[s0], %[s2], [%[out]], #8\n"
      "le lr, 1b\n"
      : [s0] "=&r"(s0), [s1] "=&r"(s1), [s2] "=&r"(s2), [s3] "=&r"(s3), [b] "+r"(b), [b2] "+r"(b2),
        [out] "+r"(out), [wv] "=&w"(wv)
      : [n] "r"(n), [step] "r"(step), [x00] "w"(xv[0][0]), [x01] "w"(xv[0][1]), [x10] "w"(xv[1][0]),
        [x11] "w"(xv[1][1])
      : "lr", "memory");
}

// acc[r][j] = sum_k x[m + r, k] w[n0 + j, k] for r < NR, j < nc,
// 16 (CH - 1) < K <= 16 CH: the x rows in registers.
template <size_t CH, size_t NR>
void sums_held(ConstMatS8 x, ConstMatS8 w, int32_t m, int32_t n0, int32_t nc, int32_t (*acc)[kGroup]) {
  const int32_t K = x.cols;
  int8x16_t xv[NR][CH];  // x rows m .. m + NR - 1, zero past K
  for (size_t r = 0; r < NR; ++r) {
    for (size_t c = 0; c < CH; ++c) {
      const int32_t k = 16 * static_cast<int32_t>(c);
      xv[r][c] = vldrbq_z_s8(x.row(m + static_cast<int32_t>(r)) + k, vctp8q(static_cast<uint32_t>(K - k)));
    }
  }
  constexpr int32_t kLast = 16 * static_cast<int32_t>(CH - 1);  // first column of the last chunk
  const mve_pred16_t tail = vctp8q(static_cast<uint32_t>(K - kLast));
  // Weight rows n < safe are read as whole vectors (the lanes past K meet
  // x's zeros): n * stride + 16 CH <= (N - 1) * stride + K, the end of w's
  // span, i.e. n <= N - 1 - ceil((16 CH - K) / stride). The rest (the last
  // row or so) load their last chunk tail-predicated.
  const int32_t short_by = (16 * static_cast<int32_t>(CH) - K + w.stride - 1) / w.stride;
  const int32_t safe_end = w.rows - short_by - n0;  // channels j < safe_end of this group are safe
  const int32_t whole = safe_end < 0 ? 0 : safe_end < nc ? safe_end : nc;
  const int8_t* b = w.row(n0);  // [K]
  int32_t j = 0;
  // K = 32 (an MCU shape's E): two weight rows per step, half the loop
  // overhead (the 4 sums fit the even registers VMLADAVA needs), in asm.
  if constexpr (CH == 2 && NR == 2) {
    held_k32_asm(xv, b, w.stride, whole / 2, acc[0]);
    j = whole / 2 * 2;
  }
  ATTN_NO_UNROLL
  for (; j < whole; ++j, b += w.stride) {
    int32_t a[NR] = {};
    for (size_t c = 0; c + 1 < CH; ++c) {
      const int8x16_t wv = vldrbq_s8(b + 16 * static_cast<int32_t>(c));
      for (size_t r = 0; r < NR; ++r) a[r] = vmladavaq_s8(a[r], xv[r][c], wv);
    }
    const int8x16_t wv = vldrbq_s8(b + kLast);
    for (size_t r = 0; r < NR; ++r) acc[r][j] = vmladavaq_s8(a[r], xv[r][CH - 1], wv);
  }
  ATTN_NO_UNROLL
  for (; j < nc; ++j, b += w.stride) {
    int32_t a[NR] = {};
    for (size_t c = 0; c + 1 < CH; ++c) {
      const int8x16_t wv = vldrbq_s8(b + 16 * static_cast<int32_t>(c));
      for (size_t r = 0; r < NR; ++r) a[r] = vmladavaq_s8(a[r], xv[r][c], wv);
    }
    const int8x16_t wv = vldrbq_z_s8(b + kLast, tail);
    for (size_t r = 0; r < NR; ++r) acc[r][j] = vmladavaq_s8(a[r], xv[r][CH - 1], wv);
  }
}

// sums_pair_k64's channels [0, n) with whole weight loads, in asm (both
// compilers alike: GCC 12 reloaded the held x chunks from the stack, an
// address computation each, ~28 instructions per channel against clang's
// ~20): x chunks 0..2 of rows 0 and 1 in six q registers, chunk 3 of both
// from `last` (the stack copy, [2][16]), per channel 4 weight loads, 2 x
// loads, 8 VMLADAV(A) into two even core registers (the sums start with the
// first chunk, no zeroing), the weight pointer's step and 2 stores (acc[1][j]
// at acc[0][j] + kGroup) in a low-overhead loop: 18 instructions a channel.
inline void pair_k64_asm(const int8x16_t (&xa)[3], const int8x16_t (&xb)[3], const int8_t* last,
                         const int8_t*& b, int32_t stride, int32_t n, int32_t* out) {
  static_assert(kGroup == 64, "the asm stores acc[1][j] at acc[0][j] + 256 bytes");
  if (n <= 0) return;
  register int32_t sa __asm__("r0"), sb __asm__("r2");  // VMLADAV needs even registers
  int8x16_t wv, xt;
  __asm__ volatile(
      "dls lr, %[n]\n"
      "1:\n"
      "vldrb.u8 %q[wv], [%[b]]\n"
      "vmladav.s8 %[sa], %q[a0], %q[wv]\n"
      "vmladav.s8 %[sb], %q[b0], %q[wv]\n"
      "vldrb.u8 %q[wv], [%[b], #16]\n"
      "vmladava.s8 %[sa], %q[a1], %q[wv]\n"
      "vmladava.s8 %[sb], %q[b1], %q[wv]\n"
      "vldrb.u8 %q[wv], [%[b], #32]\n"
      "vmladava.s8 %[sa], %q[a2], %q[wv]\n"
      "vmladava.s8 %[sb], %q[b2], %q[wv]\n"
      "vldrb.u8 %q[wv], [%[b], #48]\n"
      "vldrb.u8 %q[xt], [%[last]]\n"
      "add %[b], %[b], %[stride]\n"
      "vmladava.s8 %[sa], %q[xt], %q[wv]\n"
      "vldrb.u8 %q[xt], [%[last], #16]\n"
      "vmladava.s8 %[sb], %q[xt], %q[wv]\n"
      "str %[sb], [%[out], #256]\n"
      "str %[sa], [%[out]], #4\n"
      "le lr, 1b\n"
      : [sa] "=&r"(sa), [sb] "=&r"(sb), [b] "+r"(b), [out] "+r"(out), [wv] "=&w"(wv), [xt] "=&w"(xt)
      : [n] "r"(n), [stride] "r"(stride), [last] "r"(last), [a0] "w"(xa[0]), [a1] "w"(xa[1]), [a2] "w"(xa[2]),
        [b0] "w"(xb[0]), [b1] "w"(xb[1]), [b2] "w"(xb[2])
      : "lr", "memory");
}

// acc[r][j] = sum_k x[m + r, k] w[n0 + j, k] for r < 2, j < nc, 48 < K <= 64:
// chunks 0..2 of both rows in registers (six vectors), chunk 3 (zero past K)
// from a stack copy, so that each weight row is loaded once for two rows:
// per channel 4 weight loads, 2 x loads and 8 VMLADAVA for two sums (the
// whole-load channels in pair_k64_asm). Not inlined: with the asm's pinned
// registers in linear_s8_mve, clang-14 allocated the other paths worse (a
// decode step +112 instructions in the cost probe).
ATTN_NOINLINE void sums_pair_k64(ConstMatS8 x, ConstMatS8 w, int32_t m, int32_t n0, int32_t nc,
                                 int32_t (*acc)[kGroup]) {
  const int32_t K = x.cols;
  const int8_t* x0 = x.row(m);      // [K]
  const int8_t* x1 = x.row(m + 1);  // [K]
  const int8x16_t xa[3] = {vldrbq_s8(x0), vldrbq_s8(x0 + 16), vldrbq_s8(x0 + 32)};
  const int8x16_t xb[3] = {vldrbq_s8(x1), vldrbq_s8(x1 + 16), vldrbq_s8(x1 + 32)};
  const mve_pred16_t tail = vctp8q(static_cast<uint32_t>(K - 48));
  alignas(16) int8_t last[2][16];  // [row][16] chunk 3 of both rows, zero past K
  vstrbq_s8(last[0], vldrbq_z_s8(x0 + 48, tail));
  vstrbq_s8(last[1], vldrbq_z_s8(x1 + 48, tail));
  // Weight rows read as whole vectors while inside W's span (as in sums_held).
  const int32_t short_by = (64 - K + w.stride - 1) / w.stride;
  const int32_t safe_end = w.rows - short_by - n0;
  const int32_t whole = safe_end < 0 ? 0 : safe_end < nc ? safe_end : nc;
  const int8_t* b = w.row(n0);  // [K]
  pair_k64_asm(xa, xb, last[0], b, w.stride, whole, acc[0]);
  ATTN_NO_UNROLL
  for (int32_t j = whole; j < nc; ++j, b += w.stride) {  // the last chunk tail-predicated
    int8x16_t wv = vldrbq_s8(b);
    int32_t sa = vmladavq_s8(xa[0], wv), sb = vmladavq_s8(xb[0], wv);
    wv = vldrbq_s8(b + 16);
    sa = vmladavaq_s8(sa, xa[1], wv), sb = vmladavaq_s8(sb, xb[1], wv);
    wv = vldrbq_s8(b + 32);
    sa = vmladavaq_s8(sa, xa[2], wv), sb = vmladavaq_s8(sb, xb[2], wv);
    wv = vldrbq_z_s8(b + 48, tail);
    acc[0][j] = vmladavaq_s8(sa, vldrbq_s8(last[0]), wv);
    acc[1][j] = vmladavaq_s8(sb, vldrbq_s8(last[1]), wv);
  }
}

// Rows m .. m + R - 1 (R <= 4) of y, K <= kMaxK: 4 x 1 blocks over a stack
// copy of the rows (rows past R are zeros, computed and not stored).
void rows_buffered(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y,
                   int32_t m, int32_t R, ShiftKind left) {
  const int32_t K = x.cols;
  const int32_t full = K / 16;               // unpredicated chunks
  const bool partial = K % 16 != 0;          // and the last, partial one
  alignas(16) int8_t xs[kMaxK / 16][4][16];  // [chunk][row][16] x rows m .. m + 3, zero-padded
  for (int32_t c = 0; c < (K + 15) / 16; ++c) {
    const mve_pred16_t pred = vctp8q(static_cast<uint32_t>(K - 16 * c));
    for (int32_t r = 0; r < 4; ++r) {
      int8x16_t v = vdupq_n_s8(0);
      if (r < R) v = vldrbq_z_s8(x.row(m + r) + 16 * c, pred);
      vstrbq_s8(xs[c][r], v);
    }
  }
  const mve_pred16_t tail = vctp8q(static_cast<uint32_t>(K - 16 * full));
  for (int32_t n0 = 0; n0 < w.rows; n0 += kGroup) {
    const int32_t nc = w.rows - n0 < kGroup ? w.rows - n0 : kGroup;
    alignas(16) int32_t acc[4][kGroup];  // [row][channel] int32 sums
    alignas(16) int32_t wsum[kGroup];    // [channel] sum_k w[n, k]
    const int8_t* row = w.row(n0);       // [K]
    ATTN_NO_UNROLL
    for (int32_t j = 0; j < nc; ++j, row += w.stride) {
      const int8_t* b = row;
      const int8_t* xp = xs[0][0];
      int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
      for (int32_t c = 0; c < full; ++c, b += 16, xp += 64) {
        const int8x16_t wv = vldrbq_s8(b);
        a0 = vmladavaq_s8(a0, vldrbq_s8(xp), wv);
        a1 = vmladavaq_s8(a1, vldrbq_s8(xp + 16), wv);
        a2 = vmladavaq_s8(a2, vldrbq_s8(xp + 32), wv);
        a3 = vmladavaq_s8(a3, vldrbq_s8(xp + 48), wv);
      }
      if (partial) {
        const int8x16_t wv = vldrbq_z_s8(b, tail);
        a0 = vmladavaq_s8(a0, vldrbq_s8(xp), wv);
        a1 = vmladavaq_s8(a1, vldrbq_s8(xp + 16), wv);
        a2 = vmladavaq_s8(a2, vldrbq_s8(xp + 32), wv);
        a3 = vmladavaq_s8(a3, vldrbq_s8(xp + 48), wv);
      }
      acc[0][j] = a0;
      acc[1][j] = a1;
      acc[2][j] = a2;
      acc[3][j] = a3;
    }
    if (p.input_zero_point != 0) weight_sums(w, n0, nc, wsum);
    requantize_rows(acc, R, p.input_zero_point != 0 ? wsum : nullptr, nc, bias, p, n0, y, m, left);
  }
}

// Row m of y, any K: tail-predicated loads of both operands.
void row_any(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y, int32_t m,
             ShiftKind left) {
  const int32_t K = x.cols;
  const int8_t* a = x.row(m);  // [K]
  for (int32_t n0 = 0; n0 < w.rows; n0 += kGroup) {
    const int32_t nc = w.rows - n0 < kGroup ? w.rows - n0 : kGroup;
    alignas(16) int32_t acc[kGroup];   // [channel] int32 sums
    alignas(16) int32_t wsum[kGroup];  // [channel] sum_k w[n, k]
    for (int32_t j = 0; j < nc; ++j) {
      const int8_t* b = w.row(n0 + j);  // [K]
      int32_t s = 0;
      for (int32_t k = 0; k < K; k += 16) {
        const mve_pred16_t pred = vctp8q(static_cast<uint32_t>(K - k));
        s = vmladavaq_p_s8(s, vldrbq_z_s8(a + k, pred), vldrbq_z_s8(b + k, pred), pred);
      }
      acc[j] = s;
    }
    if (p.input_zero_point != 0) weight_sums(w, n0, nc, wsum);
    requantize_rows(&acc, 1, p.input_zero_point != 0 ? wsum : nullptr, nc, bias, p, n0, y, m, left);
  }
}

// Blocks of up to 4 rows: their sums (NR rows per pass over the weights),
// then one requantization pass for the block.
template <size_t CH>
void run_held(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y,
              ShiftKind left) {
  constexpr int32_t kRows = CH == 1 ? 4 : CH == 2 || CH == 4 ? 2 : 1;  // rows per pass over the weights
  for (int32_t m = 0; m < x.rows; m += 4) {
    const int32_t rows = x.rows - m < 4 ? x.rows - m : 4;
    for (int32_t n0 = 0; n0 < w.rows; n0 += kGroup) {
      const int32_t nc = w.rows - n0 < kGroup ? w.rows - n0 : kGroup;
      alignas(16) int32_t acc[4][kGroup];  // [row][channel] int32 sums
      alignas(16) int32_t wsum[kGroup];    // [channel] sum_k w[n, k]
      int32_t r = 0;
      for (; r + kRows <= rows; r += kRows) {
        if constexpr (CH == 4) {
          sums_pair_k64(x, w, m + r, n0, nc, acc + r);
        } else {
          sums_held<CH, kRows>(x, w, m + r, n0, nc, acc + r);
        }
      }
      for (; r < rows; ++r) sums_held<CH, 1>(x, w, m + r, n0, nc, acc + r);
      if (p.input_zero_point != 0) weight_sums(w, n0, nc, wsum);
      requantize_rows(acc, rows, p.input_zero_point != 0 ? wsum : nullptr, nc, bias, p, n0, y, m, left);
    }
  }
}

}  // namespace

void linear_s8_mve(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, const LinearS8Params& p, MatS8 y) {
  const int32_t K = x.cols;
  // Whether any channel has a left shift (else the requantization skips
  // it), or every channel a right shift (ShiftKind).
  int32x4_t most = vdupq_n_s32(INT32_MIN);
  for (int32_t n = 0; n < w.rows; n += 4) {
    const mve_pred16_t live = vctp32q(static_cast<uint32_t>(w.rows - n));
    most = vmaxq_m_s32(most, most, vldrwq_z_s32(p.shift + n, live), live);
  }
  const int32_t top = vmaxvq_s32(INT32_MIN, most);
  const ShiftKind left = top > 0 ? ShiftKind::kLeft : top < 0 ? ShiftKind::kRight : ShiftKind::kMixed;
  if (K <= 16) return run_held<1>(x, w, bias, p, y, left);
  if (K <= 32) return run_held<2>(x, w, bias, p, y, left);
  if (K <= 48) return run_held<3>(x, w, bias, p, y, left);
  if (K <= 64) return run_held<4>(x, w, bias, p, y, left);
  if (K <= kMaxK) {
    for (int32_t m = 0; m < x.rows; m += 4)
      rows_buffered(x, w, bias, p, y, m, x.rows - m < 4 ? x.rows - m : 4, left);
    return;
  }
  for (int32_t m = 0; m < x.rows; ++m) row_any(x, w, bias, p, y, m, left);
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_MVE
