// kernels/dot_rows_s8.h: the dot products of the whole-model kernels
// that end in int32 rather than int8 (W2 into the residual, the LM head's
// logits), for the Cortex-M DSP extension, Helium, AVX2 and NEON:
//   acc[m, n] = bias[n] + sum_k x[m, k] w[n, k]   (int32, bias null: 0)
// handed to out(m, n, acc), which applies the kernel's own epilogue. The
// sums are ref's int32 sums: the same products, added in another order in
// wrapping int32 arithmetic, so the result is ref's (whose own sum is in
// range: the converter's bias bound). No zero point: the model kernels carry
// it in the bias. AVX2 and NEON also have the int16 x int8 rows of the s16
// kernels (dot_rows_s16: int64 sums, exact, as ref's).
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/kernels_fixed.h"
#include "kernels/arch.h"

#if ATTN_HAVE_DSP
#include "kernels/dsp/dsp_s8.h"
#endif
#if ATTN_HAVE_MVE
#include <arm_mve.h>
#endif
#if ATTN_HAVE_AVX2
#include "kernels/x86/avx2_fixed.h"
#endif
#if ATTN_HAVE_NEON
#include "kernels/neon/neon_fixed.h"
#endif

namespace attn {
namespace detail {

#if ATTN_HAVE_DSP
namespace dsp {

// Depth of the rows expanded on the stack (4 rows: 2 KiB); deeper x goes
// through the caller's ref kernel.
constexpr int32_t kDotRowsMaxK = 256;

// One row x [K] against channels [0, N): x expanded once to SMLAD pairs
// (even / odd bytes of each word, as SXTB16 unpacks the weights), two
// channels per pass (per four k: one LDRD of x's pairs, per channel one
// load, two SXTB16, two SMLAD).
template <typename Out>
void dot_row(const int8_t* xr, ConstMatS8 w, const int32_t* bias, int32_t K4, int32_t* xb, int32_t m,
             Out& out) {
  const int32_t K = w.cols;
  for (int32_t k = 0; k < K4; k += 4) unpack<false>(load4(xr + k), 0, &xb[k / 2], &xb[k / 2 + 1]);
  int32_t n = 0;
  for (; n + 2 <= w.rows; n += 2) {
    const int8_t* b0 = w.row(n);
    const int8_t* b1 = w.row(n + 1);
    int32_t s0 = bias != nullptr ? bias[n] : 0, s1 = bias != nullptr ? bias[n + 1] : 0;
    for (int32_t k = 0; k < K4; k += 4) {
      const int32_t xe = xb[k / 2], xo = xb[k / 2 + 1];
      int32_t e0, o0, e1, o1;
      unpack<false>(load4(b0 + k), 0, &e0, &o0);
      unpack<false>(load4(b1 + k), 0, &e1, &o1);
      s0 = __smlad(xe, e0, s0);
      s1 = __smlad(xe, e1, s1);
      s0 = __smlad(xo, o0, s0);
      s1 = __smlad(xo, o1, s1);
    }
    for (int32_t k = K4; k < K; ++k) {
      s0 += int32_t{xr[k]} * int32_t{b0[k]};
      s1 += int32_t{xr[k]} * int32_t{b1[k]};
    }
    out(m, n, s0);
    out(m, n + 1, s1);
  }
  if (n < w.rows) {
    const int8_t* b0 = w.row(n);
    int32_t s0 = bias != nullptr ? bias[n] : 0;
    for (int32_t k = 0; k < K4; k += 4) {
      int32_t e0, o0;
      unpack<false>(load4(b0 + k), 0, &e0, &o0);
      s0 = __smlad(xb[k / 2], e0, s0);
      s0 = __smlad(xb[k / 2 + 1], o0, s0);
    }
    for (int32_t k = K4; k < K; ++k) s0 += int32_t{xr[k]} * int32_t{b0[k]};
    out(m, n, s0);
  }
}

// Every row of x (K <= kDotRowsMaxK): four rows at a time expanded once
// (expand4, dot4_expanded: 15 instructions per 16 MACs), the last M % 4 rows
// one at a time (dot_row).
template <typename Out>
void dot_rows(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, Out out) {
  const int32_t K = x.cols, K4 = K & ~3;
  int32_t buf[2 * kDotRowsMaxK];  // [K / 4][4 rows][even, odd] int16 pairs
  int32_t m = 0;
  for (; m + 4 <= x.rows; m += 4) {
    const int8_t* a[4] = {x.row(m), x.row(m + 1), x.row(m + 2), x.row(m + 3)};
    expand4<false>(a, K4, 0, buf);
    for (int32_t n = 0; n < w.rows; ++n) {
      const int8_t* b = w.row(n);
      const int32_t b0 = bias != nullptr ? bias[n] : 0;
      int32_t acc[4] = {b0, b0, b0, b0};
      dot4_expanded(buf, b, K4, acc);
      for (int32_t k = K4; k < K; ++k)
        for (int32_t r = 0; r < 4; ++r) acc[r] += int32_t{a[r][k]} * int32_t{b[k]};
      for (int32_t r = 0; r < 4; ++r) out(m + r, n, acc[r]);
    }
  }
  for (; m < x.rows; ++m) dot_row(x.row(m), w, bias, K4, buf, m, out);
}

}  // namespace dsp
#endif  // ATTN_HAVE_DSP

#if ATTN_HAVE_MVE
namespace mve {

// Every row of x: four channels per pass, 16 k per step (one load of x, per
// channel one load and one VMLADAVA), the last K % 16 tail-predicated (zero
// lanes in both operands add nothing).
template <typename Out>
void dot_rows(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, Out out) {
  const int32_t K = x.cols, K16 = K & ~15;
  const mve_pred16_t tail = vctp8q(static_cast<uint32_t>(K - K16));
  for (int32_t m = 0; m < x.rows; ++m) {
    const int8_t* const xr = x.row(m);
    int32_t n = 0;
    for (; n + 4 <= w.rows; n += 4) {
      const int8_t* b0 = w.row(n);
      const int8_t* b1 = w.row(n + 1);
      const int8_t* b2 = w.row(n + 2);
      const int8_t* b3 = w.row(n + 3);
      const int8_t* px = xr;
      int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      if (bias != nullptr) s0 = bias[n], s1 = bias[n + 1], s2 = bias[n + 2], s3 = bias[n + 3];
      for (int32_t i = K16 >> 4; i > 0; --i) {
        const int8x16_t xv = vldrbq_s8(px);
        s0 = vmladavaq_s8(s0, xv, vldrbq_s8(b0));
        s1 = vmladavaq_s8(s1, xv, vldrbq_s8(b1));
        s2 = vmladavaq_s8(s2, xv, vldrbq_s8(b2));
        s3 = vmladavaq_s8(s3, xv, vldrbq_s8(b3));
        px += 16, b0 += 16, b1 += 16, b2 += 16, b3 += 16;
      }
      if (K16 < K) {
        const int8x16_t xv = vldrbq_z_s8(px, tail);
        s0 = vmladavaq_s8(s0, xv, vldrbq_z_s8(b0, tail));
        s1 = vmladavaq_s8(s1, xv, vldrbq_z_s8(b1, tail));
        s2 = vmladavaq_s8(s2, xv, vldrbq_z_s8(b2, tail));
        s3 = vmladavaq_s8(s3, xv, vldrbq_z_s8(b3, tail));
      }
      out(m, n, s0);
      out(m, n + 1, s1);
      out(m, n + 2, s2);
      out(m, n + 3, s3);
    }
    for (; n < w.rows; ++n) {
      const int8_t* b0 = w.row(n);
      int32_t s0 = bias != nullptr ? bias[n] : 0;
      for (int32_t k = 0; k < K; k += 16) {
        const mve_pred16_t p = vctp8q(static_cast<uint32_t>(K - k));
        s0 = vmladavaq_s8(s0, vldrbq_z_s8(xr + k, p), vldrbq_z_s8(b0 + k, p));
      }
      out(m, n, s0);
    }
  }
}

}  // namespace mve
#endif  // ATTN_HAVE_MVE

#if ATTN_HAVE_AVX2
namespace avx2i {

// out(m, n, acc) for every output. From kDotRowsMinRows rows on (K in
// [1, kMaxK]): gemm_s8 (w packed per call into 16-channel panels, a madd
// outer product of 6 rows by 16 channels, each lane ref's int32 sum mod 2^32);
// fewer rows (a decode step, the head's last row) or a deeper K: row-by-row
// dot blocks of 2 rows by 4 channels (dot_block_s8, wrapping int32 sums).
constexpr int32_t kDotRowsMinRows = 4;

template <typename Out>
struct DotRowsEpi {
  const int32_t* bias;
  Out& o;
  int32_t j0 = 0, n = 0;
  void panel(int32_t j, int32_t cols) { j0 = j, n = cols; }
  void out(int32_t m, const __m256i (&acc)[2]) {
    alignas(32) int32_t t[kPanel];
    _mm256_store_si256(reinterpret_cast<__m256i*>(t), acc[0]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(t + 8), acc[1]);
    for (int32_t c = 0; c < n; ++c) o(m, j0 + c, fp::wrap_add(bias != nullptr ? bias[j0 + c] : 0, t[c]));
  }
};

struct DotsS8 {
  ConstMatS8 x, w;
  template <int MR, int NR>
  void run(int32_t i, int32_t j, int32_t (*out)[4]) const {
    dot_block_s8<MR, NR, false, false>(x.row(i), x.stride, 0, w.row(j), w.stride, 0, x.cols, out);
  }
};

template <typename Out>
void dot_rows(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, Out out) {
  if (x.rows >= kDotRowsMinRows && x.cols >= 1 && x.cols <= kMaxK) {
    DotRowsEpi<Out> epi{bias, out};
    gemm_s8(x.data, x.stride, x.rows, 0, w.data, w.stride, w.rows, 0, x.cols, epi);
    return;
  }
  for_blocks<2, int32_t>(
      x.rows, w.rows, DotsS8{x, w}, [&](int32_t i0, int32_t j0, int32_t(*acc)[4], int mr, int nr) {
        for (int i = 0; i < mr; ++i)
          for (int j = 0; j < nr; ++j)
            out(i0 + i, j0 + j, fp::wrap_add(bias != nullptr ? bias[j0 + j] : 0, acc[i][j]));
      });
}

struct DotsS16 {
  ConstMatS16 x;
  ConstMatS8 w;
  template <int MR, int NR>
  void run(int32_t i, int32_t j, int64_t (*out)[4]) const {
    dot_block_s16x8<MR, NR>(x.row(i), x.stride, w.row(j), w.stride, x.cols, out);
  }
};

// acc[m, n] = bias[n] + sum_k x[m, k] w[n, k] in int64 (ref's sums, exact).
template <typename Out>
void dot_rows_s16(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, Out out) {
  for_blocks<2, int64_t>(x.rows, w.rows, DotsS16{x, w},
                         [&](int32_t i0, int32_t j0, int64_t(*acc)[4], int mr, int nr) {
                           for (int i = 0; i < mr; ++i)
                             for (int j = 0; j < nr; ++j)
                               out(i0 + i, j0 + j, (bias != nullptr ? bias[j0 + j] : 0) + acc[i][j]);
                         });
}

}  // namespace avx2i
#endif  // ATTN_HAVE_AVX2

#if ATTN_HAVE_NEON
namespace neonfx {

// out(m, n, acc) for every output: dot blocks of 2 rows by 4 channels
// (dot_block_s8: SMLAL, or SDOT where the target has it; wrapping int32).
struct DotsS8 {
  ConstMatS8 x, w;
  template <int MR, int NR>
  void run(int32_t i, int32_t j, int32_t (*out)[4]) const {
    dot_block_s8<MR, NR>(x.row(i), x.stride, 0, w.row(j), w.stride, 0, x.cols, out);
  }
};

template <typename Out>
void dot_rows(ConstMatS8 x, ConstMatS8 w, const int32_t* bias, Out out) {
  for_blocks<2, int32_t>(x.rows, w.rows, DotsS8{x, w},
                         [&](int32_t i0, int32_t j0, int32_t(*acc)[4], int mr, int nr) {
                           for (int i = 0; i < mr; ++i)
                             for (int j = 0; j < nr; ++j)
                               out(i0 + i, j0 + j, wadd(bias != nullptr ? bias[j0 + j] : 0, acc[i][j]));
                         });
}

// acc[m, n] = bias[n] + sum_k x[m, k] w[n, k] in int64 (dot_block_s16x8:
// int32 lanes exact over 256-deep chunks, then int64; ref's sums, exact).
template <typename Out>
void dot_rows_s16(ConstMatS16 x, ConstMatS8 w, const int64_t* bias, Out out) {
  for_blocks<2, int64_t>(x.rows, w.rows, DotsLinearS16{x, w},
                         [&](int32_t i0, int32_t j0, int64_t(*acc)[4], int mr, int nr) {
                           for (int i = 0; i < mr; ++i)
                             for (int j = 0; j < nr; ++j)
                               out(i0 + i, j0 + j, (bias != nullptr ? bias[j0 + j] : 0) + acc[i][j]);
                         });
}

}  // namespace neonfx
#endif  // ATTN_HAVE_NEON

}  // namespace detail
}  // namespace attn
