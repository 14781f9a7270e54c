// linear, int16 x int8, Cortex-M55 Helium (MVE): linear_s16_ref's
// arithmetic, bit-exact.
//
// Blocks of 4 rows of x by 1 weight row: the 4 rows are first copied to a
// stack buffer, interleaved by chunks of 8 columns and zero-padded to a
// multiple of 8, so that the loop over a weight row is per 8 columns one
// VLDRB.S16 (8 weights widened to int16), 4 VLDRH of x from one walking
// pointer and 4 VMLADAVA.S16 (8 MACs each); the weight row's last partial
// chunk is a tail-predicated load (VCTP), never read past W.
//
// Exactness: |x w| <= 2^22, so the int32 sum of a chunk of up to kMaxK = 256
// columns stays within 2^30 (VMLADAVA adds modulo 2^32, but never gets near
// it); rows wider than kMaxK sum chunks of 256 in int64. With the int64 bias
// that is ref's one int64 sum, then ref's requantization and clamp.
#include "internal/arch.h"

#if ATTN_HAVE_MVE
#include <arm_mve.h>

#include "internal/fixed_point.h"
#include "internal/kernels_fixed.h"

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

// y[m + r, n0 + j] = requant(bias[n0 + j] + acc[r][j]) for r < R, j < nc:
// each channel's constants once for its R outputs; kSat: the full int16
// clamp, one SSAT of (r + 1) >> 1.
template <bool kSat>
void requantize_rows(const int32_t (*acc)[kGroup], int32_t R, int32_t nc, const int64_t* bias,
                     const LinearS16Params& p, int32_t n0, MatS16 y, int32_t m) {
  const int32_t lo = p.act_min, hi = p.act_max;  // locals: the int16 stores could alias p
  const int32_t* const mult = p.multiplier + n0;
  const int32_t* const shift = p.shift + n0;
  const ptrdiff_t ys = y.stride;
  int16_t* out = y.row(m) + n0;
  ATTN_NO_UNROLL
  for (int32_t j = 0; j < nc; ++j) {
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

// Rows [m, m + R) of y (R <= 4), K <= kMaxK.
void rows_buffered(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, const LinearS16Params& p, MatS16 y,
                   int32_t m, int32_t R) {
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
  const bool sat = p.act_min == -32768 && p.act_max == 32767;
  for (int32_t n0 = 0; n0 < w.rows; n0 += kGroup) {
    const int32_t nc = w.rows - n0 < kGroup ? w.rows - n0 : kGroup;
    alignas(16) int32_t acc[4][kGroup];  // [row][channel] int32 sums
    const int8_t* row = w.row(n0);       // [K]
    ATTN_NO_UNROLL
    for (int32_t j = 0; j < nc; ++j, row += w.stride) {
      const int8_t* b = row;
      const int16_t* xp = xs[0][0];
      int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
      for (int32_t c = 0; c < full; ++c, b += 8, xp += 32) {
        const int16x8_t wv = vldrbq_s16(b);
        a0 = vmladavaq_s16(a0, vldrhq_s16(xp), wv);
        a1 = vmladavaq_s16(a1, vldrhq_s16(xp + 8), wv);
        a2 = vmladavaq_s16(a2, vldrhq_s16(xp + 16), wv);
        a3 = vmladavaq_s16(a3, vldrhq_s16(xp + 24), wv);
      }
      if (partial) {
        const int16x8_t wv = vldrbq_z_s16(b, tail);
        a0 = vmladavaq_s16(a0, vldrhq_s16(xp), wv);
        a1 = vmladavaq_s16(a1, vldrhq_s16(xp + 8), wv);
        a2 = vmladavaq_s16(a2, vldrhq_s16(xp + 16), wv);
        a3 = vmladavaq_s16(a3, vldrhq_s16(xp + 24), wv);
      }
      acc[0][j] = a0;
      acc[1][j] = a1;
      acc[2][j] = a2;
      acc[3][j] = a3;
    }
    if (sat) {
      requantize_rows<true>(acc, R, nc, bias, p, n0, y, m);
    } else {
      requantize_rows<false>(acc, R, nc, bias, p, n0, y, m);
    }
  }
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
  for (int32_t m = 0; m < x.rows; m += 4) rows_buffered(x, w, bias, p, y, m, x.rows - m < 4 ? x.rows - m : 4);
}

}  // namespace detail
}  // namespace attn
#endif  // ATTN_HAVE_MVE
