// dsp/dot_rows_s8_dsp.h: dot_rows for the int32-output linears (W2 into the
// residual, the LM head), Cortex-M DSP extension (SMLAD): acc[m, n] = bias[n] + sum_k x[m, k] w[n, k]
// handed to out(m, n, acc); the contract is in kernels/kernels_model_fixed.h
// (the W2 section). Include only under ATTN_HAVE_DSP.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/kernels_fixed.h"
#include "kernels/arch.h"
#include "kernels/dsp/dsp_s8.h"

namespace attn {
namespace detail {
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
}  // namespace detail
}  // namespace attn
