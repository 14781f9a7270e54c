// linear, int16 x int8, Cortex-M55 Helium (MVE): linear_s16_ref's
// arithmetic, bit-exact.
//
// Blocks of 4 rows of x by 2 weight rows: the 4 rows are first copied to a
// stack buffer, interleaved by chunks of 8 columns and zero-padded to a
// multiple of 8, so that the loop over a pair of weight rows is per 8
// columns two VLDRB.S16 (8 weights of each row widened to int16), 4 VLDRH
// of x from one walking pointer and 8 VMLADAVA.S16 (8 MACs each) into 8
// int32 sums, in asm (sums_4x2: the sums in the even core registers
// VMLADAVA needs; 15 instructions per 64 MACs, the same code from GCC and
// clang). A last partial chunk of 1..7 columns is a tail-predicated load
// (VCTP), never read past W.
//
// Requantization, 4 channels of a row per vector where it is exact in 32
// bits for all 4: with bias in [-2^30, 2^30) and K <= kMaxK the sum
// v = bias + acc is an exact int32 (|acc| <= 256 * 2^22 = 2^30), and with rsh = 14 - shift
// >= 16 ref's floor(v rm / 2^rsh) (rm the Q0.15 multiplier, < 2^15) is
// VMULH (the high word of a 64-bit product, floor) of v and rm << (32 - rsh)
// (< 2^31) for rsh <= 32, or of v and rm then an arithmetic shift right by
// rsh - 32: floor(floor(a) / 2^s) = floor(a / 2^s). |v rm / 2^rsh| < 2^30,
// so ref's truncation to int32 and its (r + 1) >> 1 (VRSHR #1) do not wrap.
// Other channels take the scalar int64 form (UMULL/MLA, ASRL, SSAT).
//
// Exactness of the sums: |x w| <= 2^22, so the int32 sum of a chunk of up
// to kMaxK = 256 columns stays within 2^30 (VMLADAVA adds modulo 2^32, but
// never gets near it); rows wider than kMaxK sum chunks of 256 in int64.
// With the int64 bias that is ref's one int64 sum, then ref's
// requantization and clamp.
#include "kernels/arch.h"

#if ATTN_HAVE_MVE
#include <arm_mve.h>

#include "kernels/fixed_point.h"
#include "kernels/kernels_fixed.h"

#include <cstdint>

namespace attn {
namespace detail {
namespace {

constexpr int32_t kMaxK = 256;  // columns of the 4-row stack copy (2 KiB)
constexpr int32_t kGroup = 64;  // output channels per pass (stack: 4 x 64 int32 sums)

// clamp(v >> 1, -32768, 32767): the 16x8 requantization's last step and
// the int16 clamp in one SSAT.
inline int32_t ssat16_half(int32_t v) {
  int32_t r;
  __asm__("ssat %0, #16, %1, asr #1" : "=r"(r) : "r"(v));
  return r;
}

// One output from its int64 sum acc (bias included): ref's requantization and clamp.
inline void store(int64_t acc, const LinearS16Params& p, int32_t n, int16_t* y) {
  const int32_t out = fp::requantize_s64(acc, fp::reduce_multiplier_q15(p.multiplier[n]), p.shift[n]);
  *y = static_cast<int16_t>(fp::clamp_i32(out, p.act_min, p.act_max));
}

// y[m + r, n0 + j] = requant(bias[n0 + j] + acc[r][j]) for r < R, j0 <= j < j1:
// each channel's constants once for its R outputs; kSat: the full int16
// clamp, one SSAT of (r + 1) >> 1.
template <bool kSat>
void requantize_scalar(const int32_t (*acc)[kGroup], int32_t R, int32_t j0, int32_t j1, const int64_t* bias,
                       const LinearS16Params& p, int32_t n0, MatS16 y, int32_t m) {
  const int32_t lo = p.act_min, hi = p.act_max;  // locals: the int16 stores could alias p
  const int32_t* const mult = p.multiplier + n0;
  const int32_t* const shift = p.shift + n0;
  const ptrdiff_t ys = y.stride;
  int16_t* out = y.row(m) + n0;
  ATTN_NO_UNROLL
  for (int32_t j = j0; j < j1; ++j) {
    const int64_t b = bias != nullptr ? bias[n0 + j] : 0;
    const int64_t rm = static_cast<uint32_t>(fp::reduce_multiplier_q15(mult[j]));  // [0, 2^15)
    const int32_t rsh = 14 - shift[j];
    int16_t* o = out + j;
    for (int32_t r = 0; r < R; ++r, o += ys) {
      const int64_t prod = (b + acc[r][j]) * rm;
      const int32_t v =
          fp::wrap_add(static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(prod >> rsh))), 1);
      if (kSat) {
        *o = static_cast<int16_t>(ssat16_half(v));
      } else {
        *o = static_cast<int16_t>(fp::clamp_i32(v >> 1, lo, hi));
      }
    }
  }
}

// The R rows of a block, channels [n0, n0 + nc): per 4 channels their
// constants as vectors (bias, rm << max(32 - rsh, 0), min(32 - rsh, 0): a
// negative VSHL count shifts right), then R vector requantizations if all 4
// qualify (see the header: |bias| < 2^30, rsh >= 16), else the scalar form.
void requantize_rows(const int32_t (*acc)[kGroup], int32_t R, int32_t nc, const int64_t* bias,
                     const LinearS16Params& p, int32_t n0, MatS16 y, int32_t m) {
  const int32x4_t lo = vdupq_n_s32(p.act_min), hi = vdupq_n_s32(p.act_max);
  const bool sat = p.act_min == -32768 && p.act_max == 32767;
  const ptrdiff_t ys = y.stride;
  int16_t* const out = y.row(m) + n0;
  const int32_t* const mults = p.multiplier + n0;
  const int32_t* const shifts = p.shift + n0;
  ATTN_NO_UNROLL
  for (int32_t j = 0; j < nc; j += 4) {
    const int32_t j1 = nc - j < 4 ? nc : j + 4;
    const mve_pred16_t live = vctp32q(static_cast<uint32_t>(j1 - j));
    // reduce_multiplier_q15: (m + 2^15) >> 16, 0x7FFF from 0x7FFF0000 on (the saturating add's INT32_MAX)
    const int32x4_t rm = vshrq_n_s32(vqaddq_n_s32(vldrwq_z_s32(mults + j, live), 1 << 15), 16);
    const int32x4_t lsh = vaddq_n_s32(vldrwq_z_s32(shifts + j, live), 18);  // 32 - rsh
    int32x4_t b = vdupq_n_s32(0);
    int32x4_t bad = vshrq_n_s32(vsubq_s32(vdupq_n_s32(16), lsh), 31);  // -1: rsh < 16
    if (bias != nullptr) {
      // The live lanes' int64 biases as (low, high) words; bad where high is
      // not the low word's sign or low is outside [-2^30, 2^30).
      alignas(16) int64_t b64[4] = {};
      const int64_t* src = bias + n0 + j;
      if (j1 - j < 4) {
        for (int32_t i = 0; i < j1 - j; ++i) b64[i] = src[i];
        src = b64;
      }
      const int32x4x2_t w = vld2q_s32(reinterpret_cast<const int32_t*>(src));
      b = w.val[0];
      bad = vorrq_s32(bad, veorq_s32(w.val[1], vshrq_n_s32(b, 31)));
      bad = vorrq_s32(bad, vshrq_n_s32(vaddq_n_s32(b, 1 << 30), 31));
    }
    if (vmaxvq_p_u32(0, vreinterpretq_u32_s32(bad), live) != 0) {
      if (sat) {
        requantize_scalar<true>(acc, R, j, j1, bias, p, n0, y, m);
      } else {
        requantize_scalar<false>(acc, R, j, j1, bias, p, n0, y, m);
      }
      continue;
    }
    const int32x4_t mult = vshlq_s32(rm, vmaxq_s32(lsh, vdupq_n_s32(0)));
    const int32x4_t post = vminq_s32(lsh, vdupq_n_s32(0));
    int16_t* o = out + j;
    for (int32_t r = 0; r < R; ++r, o += ys) {
      int32x4_t v = vmulhq_s32(vaddq_s32(vldrwq_s32(acc[r] + j), b), mult);
      v = vrshrq_n_s32(vshlq_s32(v, post), 1);
      v = vminq_s32(vmaxq_s32(v, lo), hi);
      vstrhq_p_s32(o, v, live);  // int16, truncating
    }
  }
}

// acc[r][0] = sum_k xs[k][r] . w0[k] and acc[r][1] the same with w1 over
// `chunks` >= 1 chunks of 8 columns, for the 4 interleaved rows of xs;
// w0, w1 and xs advance past the chunks, acc by 2 channels. In asm:
// VMLADAVA takes even core registers only and the 8 sums need 8 of them
// (LR included), with the 4 pointers and the count in odd ones. The first
// chunk sets the sums (VMLADAV), then two chunks per iteration (an odd one
// first): 30 instructions per 128 MACs; 4 STRD store the sums.
inline void sums_4x2(const int8_t*& w0, const int8_t*& w1, const int16_t*& xs, int32_t chunks,
                     int32_t*& acc) {
  register int32_t a0 __asm__("r0"), b0 __asm__("r2"), a1 __asm__("r4"), b1 __asm__("r6");
  register int32_t a2 __asm__("r8"), b2 __asm__("r10"), a3 __asm__("r12"), b3 __asm__("lr");
  register const int8_t* rw0 __asm__("r1") = w0;
  register const int8_t* rw1 __asm__("r3") = w1;
  register const int16_t* rx __asm__("r5") = xs;
  register int32_t rn __asm__("r9") = chunks;
  register int32_t* racc __asm__("r11") = acc;
  int16x8_t qa, qb, qx;
#define ATTN_ROW(OP, r) \
  "vldrh.u16 %q[qx], [%[x]], #16\n" OP " %[a" #r "], %q[qx], %q[qa]\n" OP " %[b" #r "], %q[qx], %q[qb]\n"
#define ATTN_CHUNK(OP)              \
  "vldrb.s16 %q[qa], [%[w0]], #8\n" \
  "vldrb.s16 %q[qb], [%[w1]], #8\n" ATTN_ROW(OP, 0) ATTN_ROW(OP, 1) ATTN_ROW(OP, 2) ATTN_ROW(OP, 3)
  __asm__ volatile(ATTN_CHUNK("vmlav.s16")
                   "subs %[n], %[n], #1\n"
                   "lsrs %[n], %[n], #1\n"  // carry: an odd chunk left; zero: no pair left
                   "bcc 1f\n" ATTN_CHUNK("vmlava.s16")
                   "1:\n"
                   "beq 3f\n"
                   "2:\n" ATTN_CHUNK("vmlava.s16") ATTN_CHUNK("vmlava.s16")
                   "subs %[n], %[n], #1\n"
                   "bne 2b\n"
                   "3:\n"
                   "strd %[a0], %[b0], [%[acc]], #8\n"
                   "strd %[a1], %[b1], [%[acc], #248]\n"
                   "strd %[a2], %[b2], [%[acc], #504]\n"
                   "strd %[a3], %[b3], [%[acc], #760]\n"
                   : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [b0] "=&r"(b0),
                     [b1] "=&r"(b1), [b2] "=&r"(b2), [b3] "=&r"(b3), [w0] "+r"(rw0), [w1] "+r"(rw1),
                     [x] "+r"(rx), [n] "+r"(rn), [acc] "+r"(racc), [qa] "=&w"(qa), [qb] "=&w"(qb),
                     [qx] "=&w"(qx)
                   :
                   : "cc", "memory");
#undef ATTN_CHUNK
#undef ATTN_ROW
  w0 = rw0, w1 = rw1, xs = rx, acc = racc;
}
static_assert(kGroup == 64, "sums_4x2 stores rows kGroup int32 apart (256 bytes)");

// Rows [m, m + R) of y (R <= 4), channels [n0, n0 + nc), K <= kMaxK.
void block(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const LinearS16Params& p, MatS16 y, int32_t m,
           int32_t R, int32_t n0, int32_t nc) {
  const int32_t K = x.cols;
  const int32_t full = K / 8;               // unpredicated chunks of a weight row
  const bool partial = K % 8 != 0;          // and the last, partial one
  alignas(16) int16_t xs[kMaxK / 8][4][8];  // [chunk][row][8] rows m .. m + 3, zero-padded
  for (int32_t c = 0; c < (K + 7) / 8; ++c) {
    const mve_pred16_t pred = vctp16q(static_cast<uint32_t>(K - 8 * c));
    for (int32_t r = 0; r < 4; ++r) {
      int16x8_t v = vdupq_n_s16(0);
      if (r < R) v = vldrhq_z_s16(x.row(m + r) + 8 * c, pred);
      vstrhq_s16(xs[c][r], v);
    }
  }
  const mve_pred16_t tail = vctp16q(static_cast<uint32_t>(K - 8 * full));
  alignas(16) int32_t acc[4][kGroup];  // [row][channel] int32 sums
  const ptrdiff_t ws = w.stride;
  if (full > 0) {
    const int8_t* b0 = w.row(n0);
    int32_t* a = acc[0];
    const int32_t pairs = nc / 2;
    ATTN_NO_UNROLL
    for (int32_t i = 0; i < pairs; ++i, b0 += 2 * ws) {
      const int8_t* p0 = b0;
      const int8_t* p1 = b0 + ws;
      const int16_t* xp = xs[0][0];
      sums_4x2(p0, p1, xp, full, a);
    }
    if (nc % 2 != 0) {  // the last channel twice: its copy lands in column nc < kGroup, not read
      const int8_t* p0 = b0;
      const int8_t* p1 = b0;
      const int16_t* xp = xs[0][0];
      sums_4x2(p0, p1, xp, full, a);
    }
  } else {
    for (int32_t r = 0; r < 4; ++r)
      for (int32_t j = 0; j < nc; ++j) acc[r][j] = 0;
  }
  if (partial) {
    const int8_t* b = w.row(n0) + 8 * full;
    const int16_t* xp = xs[full][0];
    ATTN_NO_UNROLL
    for (int32_t j = 0; j < nc; ++j, b += ws) {
      const int16x8_t wv = vldrbq_z_s16(b, tail);
      for (int32_t r = 0; r < 4; ++r) acc[r][j] = vmladavaq_s16(acc[r][j], vldrhq_s16(xp + 8 * r), wv);
    }
  }
  requantize_rows(acc, R, nc, bias, p, n0, y, m);
}

// Row m of y, any K: tail-predicated loads of both operands, int32 sums of
// 256 columns added in int64.
void row_any(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const LinearS16Params& p, MatS16 y,
             int32_t m) {
  const int32_t K = x.cols;
  const int16_t* a = x.row(m);  // [K]
  for (int32_t n = 0; n < w.rows; ++n) {
    const int8_t* b = w.row(n);  // [K]
    int64_t acc = bias != nullptr ? bias[n] : 0;
    for (int32_t k0 = 0; k0 < K; k0 += kMaxK) {
      const int32_t k1 = K - k0 < kMaxK ? K : k0 + kMaxK;
      int32_t s = 0;
      for (int32_t k = k0; k < k1; k += 8) {
        const mve_pred16_t pred = vctp16q(static_cast<uint32_t>(k1 - k));
        s = vmladavaq_p_s16(s, vldrhq_z_s16(a + k, pred), vldrbq_z_s16(b + k, pred), pred);
      }
      acc += s;
    }
    store(acc, p, n, y.row(m) + n);
  }
}

}  // namespace

void linear_s16_mve(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const LinearS16Params& p, MatS16 y) {
  if (x.cols > kMaxK) {
    for (int32_t m = 0; m < x.rows; ++m) row_any(x, w, bias, p, y, m);
    return;
  }
  for (int32_t n0 = 0; n0 < w.rows; n0 += kGroup) {
    const int32_t nc = w.rows - n0 < kGroup ? w.rows - n0 : kGroup;
    for (int32_t m = 0; m < x.rows; m += 4)
      block(x, w, bias, p, y, m, x.rows - m < 4 ? x.rows - m : 4, n0, nc);
  }
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_MVE
